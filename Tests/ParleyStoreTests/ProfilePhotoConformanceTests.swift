import ParleyCore
import ParleyStore
import Testing

/// ``ProfilePhotoStore``'s rules, on every backend.
@Suite struct ProfilePhotoConformanceTests {
    static let blobA = String(repeating: "a", count: 64), blobB = String(repeating: "b", count: 64)

    /// A complete image upload of `owner`'s.
    static func photo(_ world: GroupWorld, of owner: User, blob: String = blobA, at now: Timestamp = .now()) async throws -> UploadID {
        let id = try await UploadConformanceTests.upload(world, owner: owner, at: now)
        try await UploadConformanceTests.complete(world, id, owner: owner, blob: blob)
        return id
    }

    @Test(arguments: StoreBackend.all)
    func everyReadOfAUserOrAMemberCarriesThePhoto(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let id = try await Self.photo(world, of: world.ada)
        let path = API.photoPath(id)
        let me = try await world.store.setPhoto(of: world.ada.id, upload: id, now: .now())
        #expect(me.photo == path && me.id == world.ada.id && me.username == "ada")
        #expect(try await world.store.user(world.ada.id)?.photo == path)
        #expect(try await world.store.users([world.ada.id, world.grace.id]).map(\.photo) == [path, nil])
        #expect(try await world.store.searchUsers(prefix: "ad", excluding: world.grace.id, limit: 5).first?.photo == path)
        let credentials = try await world.store.credentials(username: "ada")
        #expect(credentials?.user.photo == path && credentials?.passwordHash == "hash", "the columns after the user's are read where they are")
        // Members: in a direct conversation, in a group, and an invitation's inviter.
        let direct = try await world.store.conversation(.direct(world.ada.id, world.grace.id), as: world.grace.id)
        #expect(direct.members.first { $0.userId == world.ada.id }?.photo == path)
        #expect(direct.members.first { $0.userId == world.grace.id }?.photo == nil)
        let group = try await world.group(with: [world.grace.id, world.eve.id])
        let summary = try await world.store.conversations(of: world.grace.id, limit: 10, before: nil).first { $0.id == group }
        #expect(summary?.members.first { $0.userId == world.ada.id }?.photo == path)
        #expect(try await world.store.invitations(of: world.eve.id).first?.inviter.photo == path, "a stranger is invited, not added")
        let info = try await world.store.allEvents(of: world.grace.id).compactMap { event -> ConversationInfo? in
            if case .conversation(let info) = event.payload, info.id == group { info } else { nil }
        }.first
        #expect(info?.members.first { $0.id == world.ada.id }?.photo == path)
        #expect(try await world.store.photoAccess(id)?.blob == Self.blobA)
    }

    @Test(arguments: StoreBackend.all)
    func aPhotoClaimsItsUploadSoNothingElseTakesOrExpiresIt(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let past = Timestamp(milliseconds: Timestamp.now().milliseconds - 2 * 86_400_000)
        let id = try await Self.photo(world, of: world.ada, at: past)
        _ = try await world.store.setPhoto(of: world.ada.id, upload: id, now: .now())
        await #expect(throws: StoreError.invalidAttachment) { try await UploadConformanceTests.send(world, [id], from: world.ada, to: .user(world.grace.id)) }
        await #expect(throws: StoreError.uploadAttached) { try await world.store.deleteUpload(id, owner: world.ada.id) }
        #expect(try await world.store.expiredUploads(now: .now(), limit: 10).isEmpty, "its day ran out, but a photo keeps it")
        #expect(try await world.store.removeExpiredUploads([id], now: .now()).isEmpty)
        #expect(try await world.store.photoAccess(id) != nil)
        // The owner still reads it as an upload of theirs; no one else does through a message.
        #expect(try await world.store.fileAccess(id, for: world.ada.id) != nil)
        #expect(try await world.store.fileAccess(id, for: world.grace.id) == nil)
    }

    @Test(arguments: StoreBackend.all)
    func replacingOrRemovingAPhotoRemovesTheOldUploadAndOffersItsBlobToTheCollector(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let first = try await Self.photo(world, of: world.ada, blob: Self.blobA)
        let second = try await Self.photo(world, of: world.ada, blob: Self.blobB)
        _ = try await world.store.setPhoto(of: world.ada.id, upload: first, now: .now())
        let replaced = try await world.store.setPhoto(of: world.ada.id, upload: second, now: .now())
        #expect(replaced.photo == API.photoPath(second))
        #expect(try await world.store.upload(first, owner: world.ada.id) == nil)
        #expect(try await world.store.photoAccess(first) == nil, "no longer anyone's photo")
        #expect(try await world.store.blobCandidates(limit: 10) == [Self.blobA])
        #expect(try await world.store.referencedBlobs([Self.blobA, Self.blobB]) == [Self.blobB])
        // The current photo again changes nothing.
        #expect(try await world.store.setPhoto(of: world.ada.id, upload: second, now: .now()).photo == API.photoPath(second))
        #expect(try await world.store.upload(second, owner: world.ada.id)?.photoOf == world.ada.id)
        #expect(try await world.store.blobCandidates(limit: 10) == [Self.blobA])
        let removed = try await world.store.setPhoto(of: world.ada.id, upload: nil, now: .now())
        #expect(removed.photo == nil)
        #expect(try await world.store.user(world.ada.id)?.photo == nil)
        #expect(try await world.store.upload(second, owner: world.ada.id) == nil)
        #expect(try await world.store.photoAccess(second) == nil)
        #expect(Set(try await world.store.blobCandidates(limit: 10)) == [Self.blobA, Self.blobB])
        #expect(try await world.store.setPhoto(of: world.ada.id, upload: nil, now: .now()).photo == nil, "removing none is fine")
        let direct = try await world.store.conversation(.direct(world.ada.id, world.grace.id), as: world.grace.id)
        #expect(direct.members.allSatisfy { $0.photo == nil })
    }

    @Test(arguments: StoreBackend.all)
    func onlyACompleteUnclaimedImageOfTheUsersOwnBecomesTheirPhoto(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let incomplete = try await UploadConformanceTests.upload(world, owner: world.ada)
        let document = try await UploadConformanceTests.upload(world, owner: world.ada)
        _ = try await world.store.completeUpload(
            document, owner: world.ada.id, UploadReading(blob: Self.blobB, mimeType: "application/pdf", kind: .file), now: .now())
        let graces = try await Self.photo(world, of: world.grace)
        let sent = try await Self.photo(world, of: world.ada)
        _ = try await UploadConformanceTests.send(world, [sent], from: world.ada, to: .user(world.grace.id))
        for refused in [incomplete, document, graces, sent, UploadID.random()] {
            await #expect(throws: StoreError.invalidAttachment) { try await world.store.setPhoto(of: world.ada.id, upload: refused, now: .now()) }
        }
        #expect(try await world.store.user(world.ada.id)?.photo == nil)
        // Grace's photo is hers: Ada cannot take it, and it stays Grace's.
        _ = try await world.store.setPhoto(of: world.grace.id, upload: graces, now: .now())
        await #expect(throws: StoreError.invalidAttachment) { try await world.store.setPhoto(of: world.ada.id, upload: graces, now: .now()) }
        #expect(try await world.store.user(world.grace.id)?.photo == API.photoPath(graces))
        #expect(try await world.store.photoAccess(incomplete) == nil)
        #expect(try await world.store.photoAccess(document) == nil)
    }

    @Test(arguments: StoreBackend.all)
    func peersAreWhoSharesAConversationNowEachOnce(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let (ada, grace, alan, eve) = (world.ada.id, world.grace.id, world.alan.id, world.eve.id)
        func peers(of user: UserID) async throws -> Set<UserID> {
            let found = try await world.store.peers(of: user)
            #expect(found.count == Set(found).count, "no duplicates: \(found)")
            return Set(found)
        }
        // Direct partners (Ada wrote to Grace and Alan, they answered); Grace and Alan share nothing yet.
        #expect(try await peers(of: ada) == [grace, alan])
        #expect(try await peers(of: grace) == [ada])
        #expect(try await peers(of: eve) == [], "a stranger")
        // A group: Grace and Alan become peers through it; Ada, partner and co-member, counts once.
        let group = try await world.group(with: [grace, alan])
        #expect(try await peers(of: grace) == [ada, alan])
        #expect(try await peers(of: ada) == [grace, alan])
        // Eve is invited (a stranger is not added): not a member, so not a peer.
        _ = try await world.change(group, .add([eve], shareHistory: false))
        #expect(try await peers(of: grace) == [ada, alan])
        #expect(try await peers(of: eve) == [])
        // Removed: Alan is no peer of Grace's through the group any more; Ada stays his partner.
        _ = try await world.change(group, .remove(alan))
        #expect(try await peers(of: grace) == [ada])
        #expect(try await peers(of: alan) == [ada])
        #expect(try await peers(of: ada) == [grace, alan])
        // Leaving ends it too: in a second group Alan and Grace are peers until he leaves.
        let second = try await world.group(with: [grace, alan])
        #expect(try await peers(of: alan) == [ada, grace])
        _ = try await world.store.changeGroup(
            MembershipChange(actor: alan, clientId: .random(), conversation: second, action: .leave, maxMembers: 256), now: .now())
        #expect(try await peers(of: alan) == [ada])
        #expect(try await peers(of: grace) == [ada])
        // A direct conversation makes partners at its first message, answered or not.
        _ = try await world.store.send("hello?", from: eve, to: .user(grace))
        #expect(try await peers(of: eve) == [grace])
        #expect(try await peers(of: grace) == [ada, eve])
    }
}
