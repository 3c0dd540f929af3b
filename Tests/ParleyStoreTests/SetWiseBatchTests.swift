import Foundation
import Logging
import ParleyCore
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// ``PostgresSetWiseBatch``: a batch written set-wise leaves exactly what `parley_send` once per
/// element leaves, and answers the same rows.
@Suite(.timeLimit(.minutes(10))) struct SetWiseBatchTests {
    /// What the sends can change, as text, in a stable order.
    static let snapshot = """
        SELECT concat_ws('|', 'm', conversation_id, seq, id, sender_id, client_id, text, created_at) FROM messages
        UNION ALL SELECT concat_ws('|', 'e', user_id, pos, kind, conversation_id, seq, created_at) FROM events
        UNION ALL SELECT concat_ws('|', 'c', id, last_seq, last_activity_at) FROM conversations
        UNION ALL SELECT concat_ws('|', 'cm', conversation_id, user_id, delivered_seq, read_seq, first_sent_seq) FROM conversation_members
        UNION ALL SELECT concat_ws('|', 'u', id, stream_head) FROM users
        ORDER BY 1
        """

    struct Outcome: Equatable {
        var rows: [String]
        var state: [String]
    }

    /// Runs `call` in a transaction on one connection, reads what it answered and left, rolls back.
    static func outcome(_ store: PostgresStore, _ calls: [PostgresQuery]) async throws -> Outcome {
        try await store.read { db in
            try await db.query("BEGIN", logger: store.logger)
            var rows: [String] = []
            for call in calls {
                for try await row in try await db.query(call, logger: store.logger) {
                    rows.append(try row.decode(String.self))
                }
            }
            var state: [String] = []
            for try await line in try await db.query(PostgresQuery(unsafeSQL: snapshot), logger: store.logger) {
                state.append(try line.decode(String.self))
            }
            try await db.query("ROLLBACK", logger: store.logger)
            return Outcome(rows: rows, state: state)
        }
    }

    @Test func anOrdinaryBatchLeavesWhatElementByElementLeaves() async throws {
        var logger = Logger(label: "set-wise-test")
        logger.logLevel = .critical
        let store = try await PostgresStore.connect(try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync()), poolSize: 2, logger: logger)
        let users = try await ["ada", "bob", "cy", "dee"].asyncMap { try await store.makeUser($0).id }
        // Three conversations sharing users, each with a message from both sides (so every sender has written).
        var conversations: [ConversationID] = []
        for (a, b) in [(0, 1), (0, 2), (1, 2)] {
            let first = try await store.send("hi", from: users[a], to: .user(users[b]))
            _ = try await store.send("hello", from: users[b], to: .conversation(first.message.conversationId))
            conversations.append(first.message.conversationId)
        }
        // Interleaved: the same conversation several times, a user in several conversations, texts to escape.
        let plan: [(sender: Int, conversation: Int)] = [(0, 0), (1, 2), (0, 1), (1, 0), (2, 1), (0, 0), (2, 2), (1, 0), (0, 1)]
        let elements = plan.enumerated().map { index, step in
            (
                sender: users[step.sender].rawValue, clientId: "client-\(index)", conversation: conversations[step.conversation].rawValue,
                text: "n°\(index) \"quoted\" \\ 日本語 👋", now: Int64(1_700_000_000_000 + index * 7 % 5), id: UUID().uuidString.lowercased()
            )
        }
        let node = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
        let columns = "r_index, r_duplicate, r_message_id, r_seq, r_created_at, r_text, r_conversation, r_contacts_formed, r_members, r_positions"
        let batch = PostgresQuery(
            unsafeSQL: "SELECT concat_ws('|', \(columns))::TEXT FROM parley_send_batch($1, $2, $3, $4, $5, $6, $7, $8)",
            binds: try Self.bindings(
                [
                    elements.map(\.sender), elements.map(\.clientId), elements.map(\.conversation), elements.map { _ in "" }, elements.map(\.text),
                ], nows: elements.map(\.now), ids: elements.map(\.id), node: node))
        let oneByOne = elements.enumerated().map { index, element in
            PostgresQuery(
                unsafeSQL: """
                    SELECT concat_ws('|', \(index + 1), r_duplicate, r_message_id, r_seq, r_created_at, r_text, r_conversation, r_contacts_formed,
                        r_members, r_positions)::TEXT FROM parley_send($1, $2, $3, NULL, $4, $5, $6, $7)
                    """,
                binds: try! Self.bindings(
                    [[element.sender], [element.clientId], [element.conversation], [element.text]], nows: [element.now], ids: [element.id], node: node,
                    scalar: true))
        }
        // Without parley_send (renamed inside the rolled-back transaction), only the set-wise path can answer.
        let hideSend: PostgresQuery = "ALTER FUNCTION parley_send(TEXT, TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT, TEXT) RENAME TO parley_send_hidden"
        let setWise = try await Self.outcome(store, [hideSend, batch])
        let reference = try await Self.outcome(store, oneByOne)
        #expect(setWise.rows.count == plan.count)
        #expect(setWise == reference)
        try await store.close()
    }

    /// Text arrays, then times, ids and the node; each a scalar instead of a one-element array when `scalar`.
    static func bindings(_ texts: [[String]], nows: [Int64], ids: [String], node: String, scalar: Bool = false) throws -> PostgresBindings {
        var bindings = PostgresBindings()
        for column in texts {
            if scalar { bindings.append(column[0]) } else { bindings.append(column) }
        }
        if scalar { bindings.append(nows[0]) } else { bindings.append(nows) }
        if scalar { bindings.append(ids[0]) } else { bindings.append(ids) }
        bindings.append(node)
        return bindings
    }
}
