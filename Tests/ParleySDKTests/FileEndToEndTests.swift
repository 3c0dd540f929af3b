import Foundation
import ParleyCore
import ParleySDK
import Synchronization
import Testing

/// Files through the real SDK against a real server on loopback (docs/protocol.md "Files";
/// ``MessageOutbox`` rule 13): uploaded in checksummed chunks, sent once every byte is up, saved by
/// the other side in parts; a client killed mid-upload goes on from the server's offset after a
/// restart and the message arrives once.
@MainActor
@Suite(.serialized) struct FileEndToEndTests {
    static func file(bytes count: Int, seed: UInt8 = 1) throws -> (path: String, bytes: Data) {
        let bytes = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ Int(seed)) })
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("notes v2.bin").path
        try bytes.write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    /// Whether the server comes to answer `upload_not_found` for `uploadId` (within 30 s).
    static func uploadIsGone(_ uploadId: UploadID, at url: URL, token: String) async throws -> Bool {
        let api = HTTPParleyAPI(baseURL: url)
        for _ in 0..<600 {
            do {
                _ = try await api.upload(uploadId, token: token)
                try await Task.sleep(for: .milliseconds(50))
            } catch let error as ParleyClientError where error.code == .uploadNotFound {
                return true
            }
        }
        return false
    }

    /// A JPEG whose EXIF says where it was taken (no orientation), then a 30 × 40 baseline image.
    static func photoWithItsPlace() -> Data {
        func segment(_ marker: UInt8, _ data: [UInt8]) -> [UInt8] { [0xFF, marker, UInt8((data.count + 2) >> 8), UInt8((data.count + 2) & 0xFF)] + data }
        let exif = Array("Exif\0\0MM".utf8) + [0, 0x2A, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0] + Array("GPS 48.8584N 2.2945E".utf8)
        return Data(
            [0xFF, 0xD8] + segment(0xE1, exif) + segment(0xDB, [0] + [UInt8](repeating: 1, count: 64))
                + segment(0xC0, [8, 0, 30, 0, 40, 3, 1, 0x22, 0, 2, 0x11, 0, 3, 0x11, 0]) + segment(0xDA, [3, 1, 0, 2, 0, 3, 0, 0, 0x3F, 0])
                + [0, 0, 0xFF, 0xD9])
    }

    /// The server takes a photo's place out, whichever client sent it, unless it was sent as it
    /// was (`original`).
    @Test func aPhotoArrivesWithoutItsPlaceUnlessSentAsItWas() async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let direct = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        for client in [alice, bob] { client.start() }
        _ = try await eventually("online") { alice.connectionState == .online && bob.connectionState == .online ? true : nil }
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("eiffel.jpg").path
        let photo = Self.photoWithItsPlace()
        try photo.write(to: URL(fileURLWithPath: path))
        try alice.sendFiles([path], in: direct, to: bobSession.user.id)
        _ = try await eventually("the photo") { bob.timeline(direct).first?.attachments.first }
        try alice.sendFiles([path], caption: "as it was", in: direct, original: true)
        _ = try await eventually("the original") { bob.timeline(direct).count == 2 ? bob.timeline(direct).last?.attachments.first : nil }
        var saved: [Data] = []
        for item in bob.timeline(direct) {
            let attachment = try #require(item.attachments.first)
            #expect(attachment.kind == .image && attachment.width == 40 && attachment.height == 30)
            saved.append(try #require(FileManager.default.contents(atPath: try await bob.save(attachment, into: temporaryDirectory().path))))
        }
        #expect(saved.count == 2 && saved[0].count == photo.count && saved[0] != photo)
        #expect(String(decoding: saved[0], as: UTF8.self).contains("48.8584") == false, "not where it was taken")
        #expect(saved[1] == photo, "sent as it was: every byte")
        for client in [alice, bob] { client.stop() }
        await server.stop()
    }

    /// A file message cancelled while it uploads stops uploading and gives its upload up: nothing
    /// of it holds the sender's quota.
    @Test func aFileMessageCancelledMidUploadLeavesNoUploadBehind() async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let direct = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        let gate = HeldRequests(holdFrom: 2)
        let url = server.url(of: 0)
        let alice = try ParleyClient(
            session: aliceSession, api: HTTPParleyAPI(baseURL: url, requester: gate), transport: WebSocketTransport(serverURL: url),
            store: ClientStorage(directory: temporaryDirectory()).store(for: aliceSession.user.id))
        alice.start()
        _ = try await eventually("online") { alice.connectionState == .online ? true : nil }
        let file = try Self.file(bytes: 2_500_000)
        let clientId = try alice.sendFiles([file.path], caption: "never mind", in: direct, to: bobSession.user.id)
        _ = try await eventually("the second chunk on its way") { gate.held ? true : nil }
        let uploadId = try #require(alice.outbox.entries.first?.attachments?.first?.uploadId)
        try alice.deleteForMe(try #require(alice.timeline(direct).first { $0.id == clientId }))
        #expect(alice.outbox.entries.isEmpty)
        gate.release()
        #expect(try await Self.uploadIsGone(uploadId, at: url, token: aliceSession.token), "the upload was given up on the server")
        alice.stop()
        await server.stop()
    }

    @Test func aFileKilledMidUploadGoesOnFromTheServersOffsetAndArrivesOnce() async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let direct = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        bob.start()
        let aliceHome = temporaryDirectory()
        // The first run of Alice's app: its second chunk never gets an answer (the app is killed then).
        let gate = HeldRequests(holdFrom: 2)
        let url = server.url(of: 0)
        let first = try ParleyClient(
            session: aliceSession, api: HTTPParleyAPI(baseURL: url, requester: gate), transport: WebSocketTransport(serverURL: url),
            store: ClientStorage(directory: aliceHome).store(for: aliceSession.user.id))
        first.start()
        _ = try await eventually("online") { first.connectionState == .online && bob.connectionState == .online ? true : nil }
        let file = try Self.file(bytes: 2_500_000)
        let clientId = try first.sendFiles([file.path], caption: "the notes", in: direct, to: bobSession.user.id)
        _ = try await eventually("the second chunk on its way") { gate.held ? true : nil }
        let uploadId = try #require(first.outbox.entries.first?.attachments?.first?.uploadId, "the upload's id was kept at once")
        #expect(first.uploadProgress(of: clientId).map { $0 > 0.3 && $0 < 0.5 } == true)
        first.stop()
        let api = HTTPParleyAPI(baseURL: url)
        #expect(try await api.upload(uploadId, token: aliceSession.token).offset == 1 << 20, "one chunk arrived")
        #expect(bob.timeline(direct).isEmpty, "nothing is sent before every byte is up")

        // The app again, on the same local store: it asks the server where the upload stands and goes on.
        let second = try server.client(aliceSession, directory: aliceHome)
        second.start()
        _ = try await eventually("bob has it", timeout: .seconds(60)) { bob.timeline(direct).first?.attachments.first }
        let message = try #require(bob.timeline(direct).first)
        #expect(message.text == "the notes" && message.id == clientId)
        let attachment = try #require(message.attachments.first)
        #expect(attachment.id == uploadId && attachment.size == 2_500_000 && attachment.name == "notes v2.bin" && attachment.kind == .file)
        _ = try await eventually("confirmed") { second.outbox.entries.isEmpty ? true : nil }
        #expect(bob.timeline(direct).count == 1, "sent once")
        let saved = try await bob.save(attachment, into: temporaryDirectory().path)
        #expect(FileManager.default.contents(atPath: saved) == file.bytes)
        gate.release()
        for client in [second, bob] { client.stop() }
        await server.stop()
    }

    @Test func aFileTheServerRefusesFailsItsMessageWithTheReason() async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let direct = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        alice.start()
        _ = try await eventually("online") { alice.connectionState == .online ? true : nil }
        let folder = temporaryDirectory().path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for path in ["/no/such/file", folder, "/dev/zero"] {
            #expect(throws: Validation.Failure.self, "\(path)") { try alice.sendFiles([path], in: direct, to: bobSession.user.id) }
        }
        #expect(alice.outbox.entries.isEmpty, "nothing queued that cannot be sent")
        let empty = try Self.file(bytes: 0)
        let id = try alice.sendFiles([empty.path], in: direct, to: bobSession.user.id)
        _ = try await eventually("an empty file is a file too") { alice.outbox.entries.isEmpty ? true : nil }
        #expect(alice.timeline(direct).first { $0.id == id }?.attachments.first?.size == 0)
        alice.stop()
        await server.stop()
    }

    /// Rule 14: the file went up while the app had no WebSocket, then the upload vanished (removed,
    /// or expired) before the message went out. The send is refused; Retry makes the upload again
    /// from the file on this device, and the message arrives once.
    @Test func retryingAMessageWhoseUploadVanishedUploadsTheFileAgain() async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let direct = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        bob.start()
        let aliceHome = temporaryDirectory()
        let url = server.url(of: 0)
        let api = HTTPParleyAPI(baseURL: url)
        // HTTP works, the WebSocket cannot connect (a closed port): the file goes up, the message waits.
        let closed = try #require(URL(string: "http://127.0.0.1:1"))
        let offline = try ParleyClient(
            session: aliceSession, api: api, transport: WebSocketTransport(serverURL: closed),
            store: ClientStorage(directory: aliceHome).store(for: aliceSession.user.id))
        offline.start()
        let file = try Self.file(bytes: 300_000, seed: 7)
        let clientId = try offline.sendFiles([file.path], caption: "the plan", in: direct, to: bobSession.user.id)
        let uploadId = try await eventually("uploaded") {
            offline.outbox.entries.first?.attachments?.first.flatMap { $0.uploaded ? $0.uploadId : nil }
        }
        offline.stop()
        try await api.deleteUpload(uploadId, token: aliceSession.token)

        let alice = try server.client(aliceSession, directory: aliceHome)
        alice.start()
        _ = try await eventually("refused: the upload is gone") {
            if case .failed = alice.outbox.entries.first?.state { true } else { nil }
        }
        // Rule 14: the file changed meanwhile (same size): the retry hashes it again and sends it as it is now.
        let edited = Data(file.bytes.reversed())
        try edited.write(to: URL(fileURLWithPath: file.path))
        alice.retry(clientId)
        let message = try await eventually("bob has it", timeout: .seconds(60)) { bob.timeline(direct).first { $0.id == clientId } }
        let attachment = try #require(message.attachments.first)
        #expect(attachment.id != uploadId, "a new upload")
        _ = try await eventually("confirmed") { alice.outbox.entries.isEmpty ? true : nil }
        #expect(bob.timeline(direct).count == 1 && message.text == "the plan")
        let saved = try await bob.save(attachment, into: temporaryDirectory().path)
        #expect(FileManager.default.contents(atPath: saved) == edited)
        for client in [alice, bob] { client.stop() }
        await server.stop()
    }
}

/// Passes requests through to the server until the `holdFrom`-th PATCH, which (with every later
/// request) waits until ``release()``, then fails: a client killed while that request was on its way.
final class HeldRequests: HTTPRequester, Sendable {
    private let inner = AsyncHTTPClientRequester()
    private let holdFrom: Int
    private let state = Mutex<(patches: Int, held: Bool, waiters: [CheckedContinuation<Void, Never>], released: Bool)>((0, false, [], false))

    init(holdFrom: Int) { self.holdFrom = holdFrom }

    var held: Bool { state.withLock { $0.held } }

    func release() {
        let waiters = state.withLock { state in
            state.released = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func send(_ method: String, _ url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        let hold = state.withLock { state -> Bool in
            if method == "PATCH" { state.patches += 1 }
            if state.patches >= holdFrom { state.held = true }
            return state.held && !state.released
        }
        if hold {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.released { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
            throw CancellationError()
        }
        return try await inner.send(method, url, headers: headers, body: body)
    }
}
