import GRDB
import ParleyCore
import ParleyStore

extension SQLiteStore: AccountStore {
    public func createUser(_ new: NewUser, now: Timestamp) async throws -> User {
        let user = User(id: .random(), username: new.username, displayName: new.displayName, createdAt: now)
        do {
            try await write { db in
                try db.execute(
                    sql: """
                        INSERT INTO users (id, username, display_name, display_name_key, password_hash, created_at)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        user.id.rawValue, user.username, user.displayName, user.displayName.lowercased(),
                        new.passwordHash, now.milliseconds,
                    ])
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw StoreError.usernameTaken
        }
        return user
    }

    public func user(_ id: UserID) async throws -> User? {
        try await users([id]).first
    }

    public func users(_ ids: [UserID]) async throws -> [User] {
        guard !ids.isEmpty else { return [] }
        return try await lookup { db in try Self.users(ids, db) }
    }

    static func users(_ ids: [UserID], _ db: Database) throws -> [User] {
        let marks = databaseQuestionMarks(count: ids.count)
        return try Row.fetchAll(
            db, sql: "SELECT \(Columns.user) FROM users u WHERE u.id IN (\(marks)) ORDER BY u.username",
            arguments: StatementArguments(ids.map(\.rawValue))
        ).map { User(row: $0) }
    }

    public func credentials(username: String) async throws -> Credentials? {
        try await lookup { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Columns.user), u.password_hash FROM users u WHERE u.username = ?",
                arguments: [username]
            ).map { Credentials(user: User(row: $0), passwordHash: $0[Columns.userCount]) }
        }
    }

    public func searchUsers(prefix: String, excluding: UserID, limit: Int) async throws -> [User] {
        let pattern = Self.likeEscaped(prefix.lowercased()) + "%"
        return try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Columns.user) FROM users u
                    WHERE u.id != ? AND (u.username LIKE ? ESCAPE '\\' OR u.display_name_key LIKE ? ESCAPE '\\'
                        OR u.display_name_key LIKE ('% ' || ?) ESCAPE '\\')
                    ORDER BY u.username LIMIT ?
                    """,
                arguments: [excluding.rawValue, pattern, pattern, pattern, limit]
            ).map { User(row: $0) }
        }
    }

    /// Escapes LIKE wildcards so a search for `a_b` matches only that text.
    static func likeEscaped(_ s: String) -> String {
        s.replacing("\\", with: "\\\\").replacing("%", with: "\\%").replacing("_", with: "\\_")
    }

    public func createSession(tokenHash: String, user: UserID, expiresAt: Timestamp, now: Timestamp) async throws {
        try await write { db in
            // Expired sessions of this user go when a new one comes, so the table does not grow forever.
            try db.execute(sql: "DELETE FROM sessions WHERE user_id = ? AND expires_at <= ?", arguments: [user.rawValue, now.milliseconds])
            try db.execute(
                sql: "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [tokenHash, user.rawValue, now.milliseconds, expiresAt.milliseconds])
        }
    }

    public func session(tokenHash: String, now: Timestamp) async throws -> SessionInfo? {
        try rawLookup { statements in
            try statements.session.firstRow(.text(tokenHash), .int(now.milliseconds)) {
                SessionInfo(user: UserID(rawValue: $0.text(0)), expiresAt: Timestamp(milliseconds: $0.int64(1)))
            }
        }
    }

    public func deleteSession(tokenHash: String) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM sessions WHERE token_hash = ?", arguments: [tokenHash])
        }
    }

    public func deleteSessions(of user: UserID, keeping: String?) async throws {
        try await write { db in try Self.deleteSessions(of: user, keeping: keeping, db) }
    }

    public func changePassword(of user: UserID, to passwordHash: String, keeping: String?) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE users SET password_hash = ? WHERE id = ?", arguments: [passwordHash, user.rawValue])
            guard db.changesCount == 1 else { throw StoreError.userNotFound }
            try Self.deleteSessions(of: user, keeping: keeping, db)
        }
    }

    public func setDisplayName(of user: UserID, to displayName: String) async throws -> User {
        try await write { db in
            try db.execute(
                sql: "UPDATE users SET display_name = ?, display_name_key = ? WHERE id = ?",
                arguments: [displayName, displayName.lowercased(), user.rawValue])
            guard db.changesCount == 1, let updated = try Self.users([user], db).first else { throw StoreError.userNotFound }
            return updated
        }
    }

    private static func deleteSessions(of user: UserID, keeping: String?, _ db: Database) throws {
        try db.execute(
            sql: "DELETE FROM sessions WHERE user_id = ? AND token_hash IS NOT ?", arguments: [user.rawValue, keeping])
    }

    public func recordLastSeen(_ user: UserID, at time: Timestamp) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE users SET last_seen_at = ? WHERE id = ?", arguments: [time.milliseconds, user.rawValue])
        }
    }

    public func lastSeen(_ users: [UserID]) async throws -> [UserID: Timestamp] {
        guard !users.isEmpty else { return [:] }
        return try await lookup { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, last_seen_at FROM users WHERE id IN (\(databaseQuestionMarks(count: users.count))) AND last_seen_at IS NOT NULL",
                arguments: StatementArguments(users.map(\.rawValue)))
            return Dictionary(uniqueKeysWithValues: rows.map { (UserID(rawValue: $0[0]), Timestamp(milliseconds: $0[1])) })
        }
    }
}
