import Foundation
import GRDB
@testable import ParleySQLite
import Testing

/// The rules of the VFS that gathers a commit's WAL frames into one write
/// (`Sources/SQLiteProcessSetup/WriteShapingVFS.c`), on real files.
@Suite struct GatheredWALWritesTests {
    static func connection(_ path: String, synchronous: String = "FULL", gather: Bool = true, cacheSize: Int? = nil) throws -> DatabaseQueue {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            try db.execute(sql: "PRAGMA parley_gather_wal = \(gather ? "ON" : "OFF")")
            if let cacheSize { try db.execute(sql: "PRAGMA cache_size = \(cacheSize)") }
        }
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    static func gathering(_ db: DatabaseQueue) throws -> Bool {
        try db.read { db in try String.fetchOne(db, sql: "PRAGMA parley_gather_wal") } == "1"
    }

    /// What SQLite asked of the connection's WAL, and how many writes reached the file.
    static func walWrites(_ db: DatabaseQueue) throws -> (asked: Int, made: Int) {
        let counts = try db.read { db in try String.fetchOne(db, sql: "PRAGMA parley_wal_writes") } ?? ""
        let numbers = counts.split(separator: " ").compactMap { Int($0) }
        return (numbers.first ?? -1, numbers.last ?? -1)
    }

    static func insert(_ db: Database, rows: Range<Int>, size: Int = 1000) throws {
        for n in rows {
            try db.execute(sql: "INSERT INTO item (n, payload) VALUES (?, ?)", arguments: [n, String(repeating: "p", count: size)])
        }
    }

    static func count(_ db: DatabaseQueue) throws -> Int {
        try db.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM item") } ?? -1
    }

    @Test func theVFSIsTheProcessDefault() {
        #expect(SQLiteStore.walGatheringRegistered)
    }

    /// Rule 1: a connection gathers once it asks, and only while its commits sync the WAL.
    @Test func onlyAConnectionWhoseCommitsSyncGathers() throws {
        let db = try Self.connection(WALCheckpointerTests.temporaryPath(), synchronous: "FULL", gather: false)
        #expect(try !Self.gathering(db), "not asked")
        try db.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA parley_gather_wal = ON") }
        #expect(try Self.gathering(db))
        try db.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        #expect(try !Self.gathering(db), "commits that do not sync would publish frames still in memory")
        try db.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = EXTRA") }
        #expect(try Self.gathering(db))
        try db.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA parley_gather_wal = OFF") }
        #expect(try !Self.gathering(db))
    }

    /// What the VFS is for: a commit of ~130 frames is ~260 writes asked and a handful made.
    @Test(arguments: [true, false])
    func aCommitReachesTheFileInAFewWrites(gather: Bool) throws {
        let db = try Self.connection(WALCheckpointerTests.temporaryPath(), gather: gather)
        try db.write { db in try db.execute(sql: "CREATE TABLE item (n INTEGER, payload TEXT)") }
        let before = try Self.walWrites(db)
        try db.write { db in try Self.insert(db, rows: 0..<500) }
        let after = try Self.walWrites(db)
        let asked = after.asked - before.asked, made = after.made - before.made
        #expect(asked > 200)
        if gather {
            #expect(made <= 8, "\(made) writes for \(asked) asked")
        } else {
            #expect(made == asked)
        }
    }

    /// Rule 2: another connection reads every commit as it is made, through a commit larger than
    /// what is gathered at once (rule 3) and a WAL that starts over; and all of it is there after
    /// the connections close.
    @Test func anotherConnectionReadsEveryCommitAndAReopenFindsThem() throws {
        let path = WALCheckpointerTests.temporaryPath()
        var writer: DatabaseQueue? = try Self.connection(path)
        var reader: DatabaseQueue? = try Self.connection(path, gather: false)
        try writer!.write { db in try db.execute(sql: "CREATE TABLE item (n INTEGER, payload TEXT)") }
        #expect(try Self.gathering(writer!))
        var total = 0
        var framesBeforeRestart = 0
        for commit in 0..<120 {
            let rows = commit == 60 ? 3000 : commit % 7 + 1  // commit 60 is ~6 MB of frames
            try writer!.write { db in try Self.insert(db, rows: total..<(total + rows), size: commit == 60 ? 2000 : 700) }
            total += rows
            #expect(try Self.count(reader!) == total, "after commit \(commit)")
            if commit == 80 {
                // Everything copied: the writer's next commit starts the WAL over, from its header.
                framesBeforeRestart = try reader!.writeWithoutTransaction { db in try db.checkpoint(.restart) }.walFrameCount
            }
            if commit == 81 {
                let frames = try reader!.writeWithoutTransaction { db in try db.checkpoint(.passive) }.walFrameCount
                #expect(frames < framesBeforeRestart / 10, "the WAL started over: \(frames) frames after \(framesBeforeRestart)")
            }
        }
        let sum = try reader!.read { db in try Int.fetchOne(db, sql: "SELECT sum(n) FROM item") }
        #expect(sum == total * (total - 1) / 2)
        writer = nil
        reader = nil
        let reopened = try Self.connection(path, gather: false)
        #expect(try Self.count(reopened) == total)
        #expect(try reopened.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") } == ["ok"])
    }

    /// Rule 2, the write lock: a transaction that spilled frames to the WAL and rolled back leaves
    /// nothing gathered behind it that could later land on another writer's frames.
    @Test func aRolledBackTransactionLeavesNothingToLandOnAnotherWritersFrames() throws {
        let path = WALCheckpointerTests.temporaryPath()
        let gathering = try Self.connection(path, cacheSize: 8)  // a small cache spills frames mid-transaction
        let other = try Self.connection(path, gather: false)
        try gathering.write { db in try db.execute(sql: "CREATE TABLE item (n INTEGER, payload TEXT)") }
        // A committed transaction that spills reads its own spilled pages back (rule 2's read).
        try gathering.write { db in
            try Self.insert(db, rows: 0..<400)
            try db.execute(sql: "UPDATE item SET payload = 'q' || substr(payload, 2)")
        }
        let updated = try gathering.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE payload LIKE 'qp%'") }
        #expect(updated == 400)
        let spilled = try Self.walWrites(gathering)
        try? gathering.write { db in
            try Self.insert(db, rows: 1000..<1400)
            throw CancellationError()  // rolls the transaction back
        }
        #expect(try Self.walWrites(gathering).asked - spilled.asked > 50, "the transaction spilled frames")
        try other.write { db in try Self.insert(db, rows: 400..<430) }
        try gathering.write { db in try Self.insert(db, rows: 430..<440) }
        try other.write { db in try Self.insert(db, rows: 440..<450) }
        let fresh = try Self.connection(path, gather: false)
        #expect(try Self.count(fresh) == 450)
        #expect(try fresh.read { db in try Int.fetchOne(db, sql: "SELECT sum(n) FROM item") } == 450 * 449 / 2)
        #expect(try fresh.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") } == ["ok"])
    }
}
