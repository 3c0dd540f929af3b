import Foundation
import GRDB
import ParleyCore
@testable import ParleySQLite
import ParleyStore
import Testing

/// A database made before groups opens in place: its direct conversations keep their ids, history,
/// cursors and unread counts, and groups can be made beside them.
@Suite struct SQLiteGroupMigrationTests {
    @Test func aDatabaseFromBeforeGroupsMigratesInPlace() async throws {
        let path = WALCheckpointerTests.temporaryPath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let (ada, grace) = (UserID.random(), UserID.random())
        let direct = ConversationID.direct(ada, grace)
        do {
            // The schema as it shipped before groups, with a direct conversation of two messages.
            let queue = try DatabaseQueue(path: path)
            try SQLiteSchema.migrator.migrate(queue, upTo: "v2-first-sent")
            try await queue.write { db in
                for (id, name) in [(ada, "ada"), (grace, "grace")] {
                    try db.execute(
                        sql: """
                            INSERT INTO users (id, username, display_name, display_name_key, password_hash, created_at, stream_head)
                            VALUES (?, ?, ?, ?, 'h', 1, 2)
                            """, arguments: [id.rawValue, name, name, name])
                }
                try db.execute(
                    sql: "INSERT INTO conversations (id, kind, created_at, last_seq, last_activity_at) VALUES (?, 'direct', 1, 2, 2)",
                    arguments: [direct.rawValue])
                for (user, seq) in [(ada, 2), (grace, 0)] {
                    try db.execute(
                        sql: """
                            INSERT INTO conversation_members (conversation_id, user_id, delivered_seq, read_seq, joined_at, first_sent_seq)
                            VALUES (?, ?, ?, ?, 1, ?)
                            """, arguments: [direct.rawValue, user.rawValue, seq, seq, seq == 0 ? nil : 1])
                }
                for seq in 1...2 {
                    try db.execute(
                        sql: "INSERT INTO messages (id, conversation_id, seq, sender_id, client_id, text, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        arguments: [UUID().uuidString.lowercased(), direct.rawValue, seq, ada.rawValue, UUID().uuidString.lowercased(), "old \(seq)", seq])
                }
            }
        }
        let store = try SQLiteStore(path: path, durability: .normal)
        let summary = try await store.conversation(direct, as: grace)
        #expect(summary.kind == .direct && summary.lastSeq == 2 && summary.unreadCount == 2 && summary.title == nil)
        let history = try await store.messages(in: direct, as: grace, query: HistoryQuery(limit: 50)).messages
        #expect(history.map(\.text) == ["old 1", "old 2"] && history.allSatisfy { $0.entry == nil && $0.mentions == nil })
        let reply = try await store.send(NewMessage(sender: grace, clientId: .random(), target: .user(ada), text: "new"), now: .now())
        #expect(reply.message.conversationId == direct && reply.message.seq == 3)
        let group = try await store.createGroup(
            NewGroup(creator: ada, clientId: .random(), title: "After", memberIds: [grace], maxMembers: 256), now: .now())
        #expect(group.invited.isEmpty, "they had exchanged messages before the migration: contacts")
        try await store.close()
    }

    /// Group messages written before v13 have an event row per member and no `pos`; those written
    /// after are stored once. A member's replay holds both, in order, each once.
    @Test func groupMessagesStoredPerMemberBeforeStayInTheReplayBesideThoseStoredOnce() async throws {
        let path = WALCheckpointerTests.temporaryPath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var store = try SQLiteStore(path: path, durability: .normal)
        let (ada, grace, group) = try await store.adaAndGraceInAGroup(titled: "Before")
        for index in 1...3 { _ = try await store.send("old \(index)", from: ada.id, to: .conversation(group)) }
        try await store.close()
        // Those three as a database from before v13 holds them: an event row per member, no pos.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO events (user_id, pos, kind, conversation_id, seq, created_at)
                    SELECT s.user_id, m.pos, ?, m.conversation_id, m.seq, m.created_at FROM messages m
                    JOIN member_spans s ON s.conversation_id = m.conversation_id AND m.seq > s.joined_seq AND s.to_seq IS NULL
                    WHERE m.pos IS NOT NULL
                    """, arguments: [EventKind.message.rawValue])
            #expect(db.changesCount == 6)
            try db.execute(sql: "UPDATE messages SET pos = NULL")
        }
        try queue.close()

        store = try SQLiteStore(path: path, durability: .normal)
        let before = try await store.allEvents(of: grace.id)
        for index in 1...2 { _ = try await store.send("new \(index)", from: grace.id, to: .conversation(group)) }
        let replay = try await store.allEvents(of: grace.id)
        #expect(Array(replay.prefix(before.count)) == before)
        let positions = replay.map(\.position)
        #expect(zip(positions, positions.dropFirst()).allSatisfy { $0 < $1 })
        let texts = replay.compactMap { event -> String? in
            if case .message(let message) = event.payload, message.conversationId == group, message.entry == nil { message.text } else { nil }
        }
        #expect(texts == ["old 1", "old 2", "old 3", "new 1", "new 2"])
        try await store.close()
    }
}
