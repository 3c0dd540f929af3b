import ParleyCore
import ParleyStore
import Testing

/// ``UploadStore``'s rules and a send's rule 10, on every backend.
@Suite struct UploadConformanceTests {
    static let quota: Int64 = 1_000_000

    static func upload(_ world: GroupWorld, owner: User, length: Int64 = 100, at now: Timestamp = .now()) async throws -> UploadID {
        let id = UploadID.random()
        try await world.store.createUpload(
            NewUpload(id: id, owner: owner.id, name: "photo.jpg", length: length, sha256: nil, expiresAt: now.adding(seconds: 86_400)),
            quota: quota, now: now)
        return id
    }

    static func complete(_ world: GroupWorld, _ id: UploadID, owner: User, blob: String = String(repeating: "a", count: 64)) async throws {
        _ = try await world.store.completeUpload(
            id, owner: owner.id, UploadReading(blob: blob, mimeType: "image/jpeg", kind: .image, width: 640, height: 480), now: .now())
    }

    static func send(_ world: GroupWorld, _ ids: [UploadID], from sender: User, to target: SendTarget, clientId: ClientMessageID = .random())
        async throws -> SendOutcome
    {
        let requests = ids.map { AttachmentRequest(uploadId: $0, thumbnail: "data:image/jpeg;base64,AAAA", placeholder: "LEHV6nWB2yk8", width: 1, height: 1) }
        return try await world.store.send(NewMessage(sender: sender.id, clientId: clientId, target: target, text: "", attachments: requests), now: .now())
    }

    /// An upload sent as it was says so until it is complete, on every backend (FileService rule 8).
    @Test(arguments: StoreBackend.all)
    func anUploadSentAsItWasKeepsSayingSo(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let plain = try await Self.upload(world, owner: world.ada)
        let original = UploadID.random()
        try await world.store.createUpload(
            NewUpload(
                id: original, owner: world.ada.id, name: "raw.jpg", length: 10, sha256: nil, expiresAt: Timestamp.now().adding(seconds: 60), keepsMetadata: true
            ),
            quota: Self.quota, now: .now())
        try await Self.complete(world, original, owner: world.ada)
        #expect(try await world.store.upload(plain, owner: world.ada.id)?.keepsMetadata == false)
        #expect(try await world.store.upload(original, owner: world.ada.id)?.keepsMetadata == true)
    }

    /// MessageActionPlan rule 3: an edit may remove a photo's caption; a message without files keeps some text.
    @Test(arguments: StoreBackend.all)
    func anEditMayRemoveACaptionButNotAMessagesOnlyText(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let photo = try await Self.upload(world, owner: world.ada)
        try await Self.complete(world, photo, owner: world.ada)
        let request = AttachmentRequest(uploadId: photo, thumbnail: nil, placeholder: nil, width: 1, height: 1)
        let captioned = try await world.store.send(
            NewMessage(sender: world.ada.id, clientId: .random(), target: .user(world.grace.id), text: "a caption", attachments: [request]), now: .now())
        let plain = try await world.store.send("just words", from: world.ada.id, to: .conversation(captioned.message.conversationId))
        func edit(_ message: Message) async throws -> ActionOutcome {
            try await world.store.act(
                NewMessageAction(actor: world.ada.id, clientId: .random(), conversation: message.conversationId, seq: message.seq, change: .edit("")),
                now: .now())
        }
        let uncaptioned = try await edit(captioned.message).message
        #expect(uncaptioned.text.isEmpty && uncaptioned.attachments?.map(\.id) == [photo] && uncaptioned.editedAt != nil)
        let refused = await #expect(throws: Validation.Failure.self) { try await edit(plain.message) }
        #expect(refused?.code == .textEmpty)
        let history = try await world.store.messages(in: plain.message.conversationId, as: world.ada.id, query: HistoryQuery(limit: 10))
        #expect(history.messages.last?.text == "just words")
    }

    @Test(arguments: StoreBackend.all)
    func anUploadIsItsOwnersAloneAndCountsAgainstTheirQuota(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let id = try await Self.upload(world, owner: world.ada, length: 600_000)
        #expect(try await world.store.upload(id, owner: world.ada.id)?.length == 600_000)
        #expect(try await world.store.upload(id, owner: world.grace.id) == nil)
        await #expect(throws: StoreError.quotaExceeded(limit: Self.quota)) { try await Self.upload(world, owner: world.ada, length: 400_001) }
        _ = try await Self.upload(world, owner: world.ada, length: 400_000)  // exactly the quota
        _ = try await Self.upload(world, owner: world.grace, length: 900_000)  // a quota per user
        #expect(try await world.store.uploadedBytes(of: world.ada.id) == 1_000_000)
        #expect(try await world.store.uploadedBytes(of: world.grace.id) == 900_000)
        await #expect(throws: StoreError.uploadNotFound) { try await world.store.deleteUpload(id, owner: world.grace.id) }
        try await world.store.deleteUpload(id, owner: world.ada.id)
        #expect(try await world.store.upload(id, owner: world.ada.id) == nil)
        #expect(try await world.store.uploadedBytes(of: world.ada.id) == 400_000)
        _ = try await Self.upload(world, owner: world.ada, length: 600_000)  // the deleted one's bytes are free again
    }

    @Test(arguments: StoreBackend.all)
    func aSendClaimsCompleteUploadsOfItsSenderOnceAndCarriesTheServersReading(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let incomplete = try await Self.upload(world, owner: world.ada)
        await #expect(throws: StoreError.invalidAttachment) { try await Self.send(world, [incomplete], from: world.ada, to: .user(world.grace.id)) }
        let photo = try await Self.upload(world, owner: world.ada)
        try await Self.complete(world, photo, owner: world.ada)
        await #expect(throws: StoreError.invalidAttachment) { try await Self.send(world, [photo], from: world.grace, to: .user(world.ada.id)) }
        let clientId = ClientMessageID.random()
        let sent = try await Self.send(world, [photo], from: world.ada, to: .user(world.grace.id), clientId: clientId)
        let attachment = try #require(sent.message.attachments?.first)
        #expect(attachment.id == photo && attachment.kind == .image && attachment.mimeType == "image/jpeg" && attachment.size == 100)
        #expect(attachment.width == 640 && attachment.height == 480, "an image's size is the server's reading, not the client's")
        #expect(attachment.thumbnail == "data:image/jpeg;base64,AAAA" && attachment.placeholder == "LEHV6nWB2yk8")
        // A retry answers the message as stored; another message cannot take the upload again.
        let retry = try await Self.send(world, [photo], from: world.ada, to: .user(world.grace.id), clientId: clientId)
        #expect(retry.duplicate && retry.message.attachments == sent.message.attachments)
        await #expect(throws: StoreError.invalidAttachment) { try await Self.send(world, [photo], from: world.ada, to: .user(world.grace.id)) }
        await #expect(throws: StoreError.uploadAttached) { try await world.store.deleteUpload(photo, owner: world.ada.id) }
        // History and the stream carry it, on both sides.
        let page = try await world.store.messages(in: sent.message.conversationId, as: world.grace.id, query: HistoryQuery(limit: 50))
        #expect(page.messages.last?.attachments == sent.message.attachments)
        let events = try await world.store.allEvents(of: world.grace.id)
        #expect(events.contains { if case .message(let m) = $0.payload { m.attachments == sent.message.attachments } else { false } })
        // A refused send claimed nothing: the incomplete upload is still free once complete.
        try await Self.complete(world, incomplete, owner: world.ada)
        _ = try await Self.send(world, [incomplete], from: world.ada, to: .user(world.grace.id))
    }

    @Test(arguments: StoreBackend.all)
    func aFileIsReadByItsOwnerAndByWhoeverSeesItsMessageUntilRemovedOrDeleted(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        let id = try await Self.upload(world, owner: world.ada)
        try await Self.complete(world, id, owner: world.ada)
        #expect(try await world.store.fileAccess(id, for: world.ada.id)?.blob == String(repeating: "a", count: 64))
        #expect(try await world.store.fileAccess(id, for: world.grace.id) == nil, "not carried yet: the owner's alone")
        let sent = try await Self.send(world, [id], from: world.ada, to: .conversation(group))
        #expect(try await world.store.fileAccess(id, for: world.grace.id)?.kind == .image)
        #expect(try await world.store.fileAccess(id, for: world.eve.id) == nil, "a stranger")
        _ = try await world.store.changeGroup(
            MembershipChange(actor: world.ada.id, clientId: .random(), conversation: group, action: .remove(world.alan.id), maxMembers: 256), now: .now())
        #expect(try await world.store.fileAccess(id, for: world.alan.id) == nil, "a removed member keeps the message, not the bytes")
        // Back (without shared history): what he saw before is his to see again, bytes included.
        _ = try await world.store.changeGroup(
            MembershipChange(
                actor: world.ada.id, clientId: .random(), conversation: group, action: .add([world.alan.id], shareHistory: false), maxMembers: 256),
            now: .now())
        #expect(try await world.store.fileAccess(id, for: world.alan.id) != nil, "inside his earlier span")
        let later = try await Self.upload(world, owner: world.ada)
        try await Self.complete(world, later, owner: world.ada, blob: String(repeating: "d", count: 64))
        _ = try await world.store.changeGroup(
            MembershipChange(actor: world.ada.id, clientId: .random(), conversation: group, action: .remove(world.alan.id), maxMembers: 256), now: .now())
        _ = try await Self.send(world, [later], from: world.ada, to: .conversation(group))
        _ = try await world.store.changeGroup(
            MembershipChange(
                actor: world.ada.id, clientId: .random(), conversation: group, action: .add([world.alan.id], shareHistory: false), maxMembers: 256),
            now: .now())
        #expect(try await world.store.fileAccess(later, for: world.alan.id) == nil, "sent while he was away: the gap stays hidden")
        _ = try await world.store.act(
            NewMessageAction(actor: world.ada.id, clientId: .random(), conversation: group, seq: sent.message.seq, change: .delete), now: .now())
        for user in [world.ada, world.grace, world.alan] {
            #expect(try await world.store.fileAccess(id, for: user.id) == nil, "deleted for everyone: gone for \(user.username)")
        }
        let page = try await world.store.messages(in: group, as: world.grace.id, query: HistoryQuery(limit: 50))
        #expect(page.messages.first { $0.seq == sent.message.seq }?.attachments == nil)
        #expect(try await world.store.blobCandidates(limit: 10) == [String(repeating: "a", count: 64)])
        #expect(try await world.store.referencedBlobs([String(repeating: "a", count: 64)]).isEmpty)
        try await world.store.dropBlobCandidates([String(repeating: "a", count: 64)])
        #expect(try await world.store.blobCandidates(limit: 10).isEmpty)
    }

    @Test(arguments: StoreBackend.all)
    func unclaimedUploadsExpireAndTheirBlobsBecomeCandidates(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let past = Timestamp(milliseconds: Timestamp.now().milliseconds - 2 * 86_400_000)
        let old = try await Self.upload(world, owner: world.ada, at: past)
        try await Self.complete(world, old, owner: world.ada, blob: String(repeating: "b", count: 64))
        let carried = try await Self.upload(world, owner: world.ada, at: past)
        try await Self.complete(world, carried, owner: world.ada, blob: String(repeating: "c", count: 64))
        _ = try await Self.send(world, [carried], from: world.ada, to: .user(world.grace.id))
        let fresh = try await Self.upload(world, owner: world.ada)
        let expired = try await world.store.expiredUploads(now: .now(), limit: 10)
        #expect(expired == [old])
        #expect(try await world.store.removeExpiredUploads(expired + [fresh], now: .now()) == [old])
        #expect(try await world.store.upload(old, owner: world.ada.id) == nil)
        #expect(try await world.store.upload(fresh, owner: world.ada.id) != nil)
        #expect(try await world.store.blobCandidates(limit: 10) == [String(repeating: "b", count: 64)])
        #expect(
            try await world.store.referencedBlobs([String(repeating: "b", count: 64), String(repeating: "c", count: 64)]) == [String(repeating: "c", count: 64)]
        )
        // The same bytes uploaded again: the blob is named again and no longer a candidate.
        let again = try await Self.upload(world, owner: world.grace)
        try await Self.complete(world, again, owner: world.grace, blob: String(repeating: "b", count: 64))
        #expect(try await world.store.blobCandidates(limit: 10).isEmpty)
    }
}
