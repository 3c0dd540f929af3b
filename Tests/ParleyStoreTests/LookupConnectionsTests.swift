import Dispatch
import Foundation
import GRDB
import ParleyCore
import ParleyStore
@testable import ParleySQLite
import Synchronization
import Testing

/// ``LookupConnections``' rules, on a real store file; the lookups' results are held to the store
/// protocol by the conformance suite.
@Suite struct LookupConnectionsTests {
    private struct Failed: Error {}

    private func withStore(_ body: (SQLiteStore, UserID) async throws -> Void) async throws {
        let path = WALCheckpointerTests.temporaryPath()
        let store = try SQLiteStore(path: path)
        let user = try await store.createUser(NewUser(username: "lookup", displayName: "Lookup", passwordHash: "x"), now: .now()).id
        try await body(store, user)
        try await store.close()
    }

    private func bumpHead(_ store: SQLiteStore, _ user: UserID) throws {
        try store.pool.write { db in try db.execute(sql: "UPDATE users SET stream_head = stream_head + 1 WHERE id = ?", arguments: [user.rawValue]) }
    }

    /// Rule 1: callers at once each get a connection of their own, and all of them are kept.
    @Test func callersAtOnceEachGetAConnection() async throws {
        try await withStore { store, user in
            let seen = Mutex<Set<ObjectIdentifier>>([])
            let inside = Atomic<Int>(0), most = Atomic<Int>(0)
            // Threads of their own (a busy machine can leave `concurrentPerform` one thread), each
            // waiting inside until all six are in: only callers that share a connection never get there.
            let callers = DispatchGroup()
            for _ in 0..<6 {
                callers.enter()
                Thread {
                    defer { callers.leave() }
                    let head = try? store.lookupConnections.run { statements in
                        let now = inside.add(1, ordering: .sequentiallyConsistent).newValue
                        most.max(now, ordering: .sequentiallyConsistent)
                        defer { inside.subtract(1, ordering: .sequentiallyConsistent) }
                        seen.withLock { _ = $0.insert(ObjectIdentifier(statements)) }
                        let deadline = Date().addingTimeInterval(5)
                        while most.load(ordering: .sequentiallyConsistent) < 6, Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
                        return try SQLiteStore.streamHead(of: user, statements)
                    }
                    #expect(head == 0)
                }.start()
            }
            callers.wait()
            #expect(seen.withLock(\.count) == most.load(ordering: .sequentiallyConsistent), "one connection per caller at once")
            #expect(most.load(ordering: .sequentiallyConsistent) == 6)
        }
    }

    /// Rule 2: the statements of one read see one snapshot, and the next read sees what was
    /// committed meanwhile.
    @Test func aReadOfSeveralStatementsSeesOneSnapshot() async throws {
        try await withStore { store, user in
            let heads = try store.lookupConnections.run { statements in
                try statements.snapshot {
                    let before = try SQLiteStore.streamHead(of: user, statements)
                    try bumpHead(store, user)
                    return (before, try SQLiteStore.streamHead(of: user, statements))
                }
            }
            #expect(heads.0 == 0 && heads.1 == 0)
            #expect(try await store.streamHead(of: user) == 1)
        }
    }

    /// Rule 3: a read that fails ends its transaction, so the connection does not stay on an old
    /// snapshot.
    @Test func aFailedReadLeavesNoTransactionOpen() async throws {
        try await withStore { store, user in
            #expect(throws: Failed.self) {
                try store.lookupConnections.run { statements in
                    try statements.snapshot {
                        _ = try SQLiteStore.streamHead(of: user, statements)
                        throw Failed()
                    }
                }
            }
            try bumpHead(store, user)
            #expect(try store.lookupConnections.run { try SQLiteStore.streamHead(of: user, $0) } == 1)
        }
    }

    /// Rule 5, through the store: no lookup after close.
    @Test func noLookupAfterClose() async throws {
        let store = try SQLiteStore(path: WALCheckpointerTests.temporaryPath())
        let user = try await store.createUser(NewUser(username: "closed", displayName: "Closed", passwordHash: "x"), now: .now()).id
        #expect(try await store.liveStart(of: user).head == 0)
        try await store.close()
        await #expect(throws: DatabaseError.self) { try await store.liveStart(of: user) }
    }
}
