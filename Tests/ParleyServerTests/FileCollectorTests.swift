import Foundation
import Logging
import NIOCore
import ParleyCore
import ParleyFiles
import ParleySQLite
import ParleyStore
import Testing

@testable import ParleyServer

/// ``FileCollector``'s four rules, on a real SQLite store and a real local blob store, with the clock
/// moved by the `now` it is given.
@Suite struct FileCollectorTests {
    static func stage(_ bytes: [UInt8], as upload: UploadID, in blobs: LocalBlobStore) async throws -> StoredBlob {
        let body = AsyncStream<ByteBuffer> { continuation in
            continuation.yield(ByteBuffer(bytes: bytes))
            continuation.finish()
        }
        _ = try await blobs.appendStaged(upload.rawValue, at: 0, limit: Int64(bytes.count), body: body)
        let blob = try await blobs.commitStaged(upload.rawValue)
        try await blobs.deleteStaged(upload.rawValue)  // as FileService does once the upload is recorded
        return blob
    }

    @Test func expiredUploadsDeletedMessagesFilesAndUnnamedBlobsGoAndNothingElse() async throws {
        let store = try SQLiteStore(path: TestServer.temporaryDatabase(), durability: .normal)
        let blobs = try LocalBlobStore(directory: NSTemporaryDirectory() + "parley-collector-\(UUID().uuidString)")
        let collector = FileCollector(store: store, blobs: blobs, configuration: FileConfiguration(), logger: Logger(label: "test"))
        let ada = try await store.createUser(NewUser(username: "ada", displayName: "Ada", passwordHash: "-"), now: .now())
        let grace = try await store.createUser(NewUser(username: "grace", displayName: "Grace", passwordHash: "-"), now: .now())
        let now = Timestamp.now()
        func upload(_ bytes: [UInt8]) async throws -> (UploadID, StoredBlob) {
            let id = UploadID.random()
            try await store.createUpload(
                NewUpload(id: id, owner: ada.id, name: "f", length: Int64(bytes.count), sha256: nil, expiresAt: now.adding(seconds: 86_400)),
                quota: 1 << 30, now: now)
            let blob = try await Self.stage(bytes, as: id, in: blobs)
            _ = try await store.completeUpload(id, owner: ada.id, UploadReading(blob: blob.key.sha256, mimeType: "application/pdf", kind: .file), now: now)
            return (id, blob)
        }
        let (kept, keptBlob) = try await upload([1, 2, 3])
        let (deleted, deletedBlob) = try await upload([4, 5, 6])
        let (unclaimed, unclaimedBlob) = try await upload([7, 8, 9])
        let sent = try await store.send(
            NewMessage(
                sender: ada.id, clientId: .random(), target: .user(grace.id), text: "", attachments: [AttachmentRequest(uploadId: kept)]), now: now)
        let gone = try await store.send(
            NewMessage(
                sender: ada.id, clientId: .random(), target: .conversation(sent.message.conversationId), text: "",
                attachments: [AttachmentRequest(uploadId: deleted)]), now: now)
        _ = try await store.act(
            NewMessageAction(actor: ada.id, clientId: .random(), conversation: gone.message.conversationId, seq: gone.message.seq, change: .delete),
            now: now)
        // A staging nobody finished, and a blob no upload names (a crash between the two).
        _ = try await blobs.appendStaged("abandoned", at: 0, limit: 10, body: AsyncStream<ByteBuffer> { $0.finish() })
        let orphan = try await Self.stage([10, 11], as: .random(), in: blobs)

        // At once: the deleted message's blob is too fresh to go (the same bytes may be uploading anew).
        #expect(try await collector.collect(now: now) == FileCollector.Report())
        #expect(try await blobs.size(of: deletedBlob.key) != nil)
        // Three minutes on: the deleted message's file goes, nothing else.
        #expect(try await collector.collect(now: now.adding(seconds: 180)) == FileCollector.Report(uploads: 0, stagings: 0, blobs: 1))
        #expect(try await blobs.size(of: deletedBlob.key) == nil)
        // A day on: the unclaimed upload expires and its blob (a day old) goes with it; so does the orphan,
        // past the sweep's hour; the abandoned staging waits for the upload lifetime and the grace.
        let day = now.adding(seconds: 86_400 + 60)
        #expect(try await collector.collect(now: day) == FileCollector.Report(uploads: 1, stagings: 0, blobs: 2))
        #expect(try await store.upload(unclaimed, owner: ada.id) == nil)
        #expect(try await blobs.size(of: unclaimedBlob.key) == nil)
        #expect(try await blobs.size(of: orphan.key) == nil)
        #expect(try await collector.collect(now: day.adding(seconds: 3 * 3600)) == FileCollector.Report(uploads: 0, stagings: 1, blobs: 0))
        #expect(try await blobs.size(of: keptBlob.key) == 3)
        #expect(try await store.fileAccess(kept, for: grace.id) != nil)
        try await store.close()
    }
}
