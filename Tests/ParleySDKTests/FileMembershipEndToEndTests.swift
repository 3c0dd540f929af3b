import Foundation
import ParleyCore
import ParleySDK
import Testing

/// ``ParleyClient`` files and group membership, against a real server on loopback: once I am out of
/// the group a message with files was written in, its files stop uploading (the server would refuse
/// the message once every byte was up) and the message fails with why.
@MainActor
@Suite(.serialized) struct FileMembershipEndToEndTests {
    @Test func aFileStopsUploadingOnceIAmRemovedAndItsMessageSaysWhy() async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let (aliceId, bobId) = (aliceSession.user.id, bobSession.user.id)
        let url = server.url(of: 0)
        let gate = HeldRequests(holdFrom: 2)  // the second chunk, and every request after it, waits for the test
        let alice = try ParleyClient(
            session: aliceSession, api: HTTPParleyAPI(baseURL: url, requester: gate), transport: WebSocketTransport(serverURL: url),
            store: ClientStorage(directory: temporaryDirectory()).store(for: aliceId))
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        for client in [alice, bob] { client.start() }
        _ = try await eventually("both online") { [alice, bob].allSatisfy { $0.connectionState == .online } ? true : nil }
        // Contacts (both wrote in their direct conversation), so Bob's group takes Alice in at once.
        let direct = ConversationID.direct(aliceId, bobId)
        try bob.send("hi Alice", in: direct, to: aliceId)
        _ = try await eventually("alice has it") { alice.timeline(direct).count == 1 ? true : nil }
        try alice.send("hi Bob", in: direct)
        _ = try await eventually("bob has the reply") { bob.timeline(direct).count == 2 ? true : nil }
        let group = try await bob.createGroup(title: "Plans", members: [aliceId]).conversation.id
        _ = try await eventually("alice is in") { alice.conversations[group]?.title == "Plans" ? true : nil }

        let file = try FileEndToEndTests.file(bytes: 2_500_000, seed: 3)
        let clientId = try alice.sendFiles([file.path], caption: "the plan", in: group)
        _ = try await eventually("the second chunk on its way") { gate.held ? true : nil }
        let uploadId = try #require(alice.outbox.entries.first?.attachments?.first?.uploadId)
        try await bob.removeMember(aliceId, from: group)
        _ = try await eventually("alice knows she is out") { alice.conversations[group]?.leftSeq != nil ? true : nil }
        gate.release()  // the chunk held fails as a lost connection would; the upload must not go on
        let reason = try await eventually("the message failed") { () -> String? in
            if case .failed(let reason) = alice.outbox.entries.first(where: { $0.clientId == clientId })?.state { reason } else { nil }
        }
        #expect(reason == ParleyClient.notAMember)
        #expect(try await FileEndToEndTests.uploadIsGone(uploadId, at: url, token: aliceSession.token), "the part sent holds no quota")
        #expect(!bob.timeline(group).contains { $0.text == "the plan" })
        for client in [alice, bob] { client.stop() }
        await server.stop()
    }
}
