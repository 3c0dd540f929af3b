import GRDB
import ParleyCore
@testable import ParleySQLite
import ParleyStore
import Testing

/// `PRAGMA integrity_check` (``SQLiteStore/integrityCheck()``, what `parley torture` ends with) finds a
/// sound database sound: SQLite 3.40 reported every row of a WITHOUT ROWID table whose key has a
/// column after others as holding NULLs, and `former_reactions` was such a table until v22.
@Suite struct SQLiteIntegrityTests {
    @Test func aFormerMembersReactionsLeaveTheDatabaseCheckingSound() async throws {
        let path = WALCheckpointerTests.temporaryPath()
        let store = try SQLiteStore(path: path, durability: .normal)
        let (ada, grace, group) = try await store.adaAndGraceInAGroup(titled: "Trip")
        let seq = try await store.send("plans", from: ada.id, to: .conversation(group)).message.seq
        func react(_ emoji: String) async throws {
            _ = try await store.act(NewMessageAction(actor: ada.id, clientId: .random(), conversation: group, seq: seq, change: .react(emoji)), now: .now())
        }
        try await react("👍")
        _ = try await store.changeGroup(
            MembershipChange(actor: ada.id, clientId: .random(), conversation: group, action: .remove(grace.id), maxMembers: 256), now: .now())
        try await react("🎉")  // Grace saw 👍: it is kept for her
        #expect(try await store.integrityCheck() == ["ok"])
        try await store.close()
        let queue = try DatabaseQueue(path: path)
        let (kept, columns) = try await queue.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM former_reactions"),
                try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('former_reactions')")
            )
        }
        #expect(kept == 1)
        #expect(Array(columns.prefix(4)) == ["conversation_id", "seq", "user_id", "replaced_mark"], "the key's columns first")
        try queue.close()
    }
}
