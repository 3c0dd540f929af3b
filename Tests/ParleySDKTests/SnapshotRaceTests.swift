import Foundation
import ParleyCore
import ParleySDK
import Testing

/// The conversation list read over HTTP and the live stream race; what the stream said last stays.
@MainActor
@Suite struct SnapshotRaceTests {
    @Test func aListReadBeforeAReceiptAndAnsweredAfterItKeepsTheReceipt() async throws {
        let fixture = Fixture()
        let mine = fixture.message(1, from: fixture.me, "did you get this?")
        fixture.api.conversationList = [fixture.summary(lastSeq: 1, lastMessage: mine, myRead: 1)]
        let race = try await HeldReload.start(fixture)
        let receipt = ReceiptUpdate(conversationId: fixture.conversation, userId: fixture.grace.id, deliveredSeq: 1, readSeq: 1)
        race.connection.push(.event(StreamEvent(position: 1, payload: .receipt(receipt))))
        _ = try await eventually("the receipt applied") { graceRead(race.client, fixture) == 1 ? true : nil }
        await race.answer()
        #expect(graceRead(race.client, fixture) == 1, "the older list must not move Grace's cursor back")
        #expect(race.client.conversations[fixture.conversation]?.lastMessage == mine)
    }

    @Test func aListAnsweredAfterANewMessageKeepsTheNewerLastMessage() async throws {
        let fixture = Fixture()
        fixture.api.conversationList = [fixture.summary()]
        let race = try await HeldReload.start(fixture)
        let hello = fixture.message(1, from: fixture.grace, "hello", at: 5000)
        race.connection.push(.event(StreamEvent(position: 1, payload: .message(hello))))
        _ = try await eventually("the message applied") { race.client.conversations[fixture.conversation]?.lastSeq == 1 ? true : nil }
        await race.answer()
        let summary = try #require(race.client.conversations[fixture.conversation])
        #expect(summary.lastSeq == 1 && summary.lastMessage == hello && summary.lastActivityAt == hello.createdAt)
        #expect(race.client.unreadCount(fixture.conversation) == 1)
    }

    private func graceRead(_ client: ParleyClient, _ fixture: Fixture) -> Int64? {
        client.conversations[fixture.conversation]?.members.first { $0.userId == fixture.grace.id }?.readSeq
    }
}

/// A connected client whose next list reload has been read by the server but not yet answered.
@MainActor
private struct HeldReload {
    let client: ParleyClient
    let connection: FakeConnection
    let reload: Task<Void, Never>
    let release: AsyncStream<Void>.Continuation

    static func start(_ fixture: Fixture) async throws -> HeldReload {
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        _ = try await eventually("the list") { client.conversations[fixture.conversation] }
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        fixture.api.holdConversations = { for await _ in released { return } }
        let reload = Task { await client.reloadConversations() }
        _ = try await eventually("the list read again") { fixture.api.conversationRequests == 2 ? true : nil }
        return HeldReload(client: client, connection: connection, reload: reload, release: release)
    }

    /// Lets the held answer arrive and waits until the client has applied it.
    func answer() async {
        release.yield()
        await reload.value
    }
}
