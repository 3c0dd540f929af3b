import Foundation
import Logging
import ParleyCore
@testable import ParleyPostgres
import ParleyServer
import ParleyStore
import ParleyTestSupport
import Testing

/// ClientConnection rule 7: a connection whose answer waits on a database that does not answer
/// (not down, not closed: a network that stopped forwarding) is dropped after the answer timeout,
/// reads paused or not, so it is not counted for ever; the client resends and nothing doubles.
@Suite struct StuckConnectionTests {
    @Test(.timeLimit(.minutes(10))) func aSendTheDatabaseNeverAnswersDropsItsConnectionAndTheRetryLandsOnce() async throws {
        let url = try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync())
        // The node reaches PostgreSQL through a relay that can stop forwarding.
        let relay = try await FreezableRelay(to: url.port)
        var relayed = url
        relayed.port = relay.port
        let store = try await PostgresStore.connect(relayed, poolSize: 4, logger: Logger(label: "test"))
        try await TestServer.run(store: store, configure: { $0.answerTimeoutSeconds = 1 }) { api in
            let ada = try await api.register("ada"), grace = try await api.register("grace")
            let socket = try await api.socket(ada)
            let clientId = ClientMessageID.random()
            await relay.freeze()
            // A flood fills the inbound queue behind the stuck send, so reads pause too (rule 7).
            socket.send(.send(SendRequest(clientId: clientId, recipientId: grace.id, text: "stuck")))
            for _ in 0..<64 { socket.send(.send(SendRequest(clientId: .random(), recipientId: grace.id, text: "behind"))) }
            // The server drops it (a reset, when the flood is still unread): the time limit guards the wait.
            _ = try? await socket.closed()
            await relay.thaw()

            // The client reconnects and resends until it has its ack, as the SDK does: on a loaded
            // machine the thawed pool may take longer than the 1-s answer timeout, and then the
            // server rightly drops that connection too (rule 7). Whatever the tries, it is stored once.
            var acked: Message?
            for _ in 0..<8 where acked == nil {
                let again = try await api.socket(ada)
                again.send(.send(SendRequest(clientId: clientId, recipientId: grace.id, text: "stuck")))
                acked = try await withThrowingTaskGroup(of: Message?.self) { group in
                    // A hang guard, not a timing check.
                    group.addTask {
                        try await again.inbox.waitFor("the resend's ack", timeout: .seconds(60)) { frames in
                            frames.lazy.compactMap { if case .sent(_, let message, _, _) = $0, message.clientId == clientId { message } else { nil } }.first
                        }
                    }
                    group.addTask {
                        _ = try? await again.closed()
                        return nil
                    }
                    // Either way this socket is done: closing it ends the child still waiting.
                    let first: Message?
                    do {
                        first = try await group.next() ?? nil
                    } catch {
                        await again.close()
                        throw error
                    }
                    group.cancelAll()
                    await again.close()
                    return first
                }
            }
            let message = try #require(acked, "the resend was answered within 8 connections")
            let stored = try await store.messages(in: message.conversationId, as: ada.id, query: HistoryQuery(limit: 200)).messages
            #expect(stored.filter { $0.clientId == clientId }.count == 1, "sent twice, stored once")
        }
        try await store.close()
        await relay.close()
    }
}
