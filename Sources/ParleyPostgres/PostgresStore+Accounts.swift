import ParleyCore
import ParleyStore
import PostgresNIO

extension PostgresStore: AccountStore {
    public func createUser(_ new: NewUser, now: Timestamp) async throws -> User {
        let user = User(id: .random(), username: new.username, displayName: new.displayName, createdAt: now)
        do {
            try await execute(
                """
                INSERT INTO users (id, username, display_name, display_name_key, password_hash, created_at)
                VALUES (\(user.id.rawValue), \(user.username), \(user.displayName), \(user.displayName.lowercased()),
                        \(new.passwordHash), \(now.milliseconds))
                """)
        } catch let error as PSQLError where error.sqlState == "23505" {
            throw StoreError.usernameTaken
        }
        return user
    }

    public func user(_ id: UserID) async throws -> User? {
        try await users([id]).first
    }

    public func users(_ ids: [UserID]) async throws -> [User] {
        guard !ids.isEmpty else { return [] }
        return try await read { db in try await Self.users(ids, db, self.logger) }
    }

    static func users(_ ids: [UserID], _ db: PostgresConnection, _ logger: Logger) async throws -> [User] {
        try await db.rows(
            "SELECT \(unescaped: Columns.user) FROM users u WHERE u.id = ANY(\(ids.map(\.rawValue))) ORDER BY u.username COLLATE \"C\"",
            logger
        ).map { User(try $0.decode(UserRow.self)) }
    }

    public func credentials(username: String) async throws -> Credentials? {
        try await read { db in
            try await db.rows(
                "SELECT \(unescaped: Columns.user), u.password_hash FROM users u WHERE u.username = \(username)",
                self.logger
            ).first.map { row in
                let (id, name, display, created, photo, hash) = try row.decode((String, String, String, Int64, String?, String).self)
                return Credentials(user: User((id, name, display, created, photo)), passwordHash: hash)
            }
        }
    }

    public func searchUsers(prefix: String, excluding: UserID, limit: Int) async throws -> [User] {
        let pattern = Self.likeEscaped(prefix.lowercased()) + "%"
        let wordPattern = "% " + pattern
        return try await read { db in
            try await db.rows(
                """
                SELECT \(unescaped: Columns.user) FROM users u
                WHERE u.id <> \(excluding.rawValue) AND (u.username LIKE \(pattern) OR u.display_name_key LIKE \(pattern)
                    OR u.display_name_key LIKE \(wordPattern))
                ORDER BY u.username COLLATE "C" LIMIT \(limit)
                """, self.logger
            ).map { User(try $0.decode(UserRow.self)) }
        }
    }

    /// Escapes LIKE wildcards (the default escape character is a backslash) so `a_b` matches only that text.
    static func likeEscaped(_ s: String) -> String {
        s.replacing("\\", with: "\\\\").replacing("%", with: "\\%").replacing("_", with: "\\_")
    }

    public func createSession(tokenHash: String, user: UserID, expiresAt: Timestamp, now: Timestamp) async throws {
        try await transaction { db in
            // Expired sessions of this user go when a new one comes, so the table does not grow forever.
            try await db.query("DELETE FROM sessions WHERE user_id = \(user.rawValue) AND expires_at <= \(now.milliseconds)", logger: self.logger)
            try await db.query(
                """
                INSERT INTO sessions (token_hash, user_id, created_at, expires_at)
                VALUES (\(tokenHash), \(user.rawValue), \(now.milliseconds), \(expiresAt.milliseconds))
                """, logger: self.logger)
        }
    }

    public func session(tokenHash: String, now: Timestamp) async throws -> SessionInfo? {
        try await read { db in
            try await db.rows(
                "SELECT user_id, expires_at FROM sessions WHERE token_hash = \(tokenHash) AND expires_at > \(now.milliseconds)", self.logger
            ).first.map { row in
                let (user, expires) = try row.decode((String, Int64).self)
                return SessionInfo(user: UserID(rawValue: user), expiresAt: Timestamp(milliseconds: expires))
            }
        }
    }

    public func deleteSession(tokenHash: String) async throws {
        try await execute("DELETE FROM sessions WHERE token_hash = \(tokenHash)")
    }

    public func deleteSessions(of user: UserID, keeping: String?) async throws {
        try await transaction { db in try await self.deleteSessions(of: user, keeping: keeping, db) }
    }

    public func changePassword(of user: UserID, to passwordHash: String, keeping: String?) async throws {
        try await transaction { db in
            guard
                try await db.value(
                    "UPDATE users SET password_hash = \(passwordHash) WHERE id = \(user.rawValue) RETURNING 1", as: Int32.self, self.logger) != nil
            else { throw StoreError.userNotFound }
            try await self.deleteSessions(of: user, keeping: keeping, db)
        }
    }

    public func setDisplayName(of user: UserID, to displayName: String) async throws -> User {
        try await transaction { db in
            try await db.query(
                "UPDATE users SET display_name = \(displayName), display_name_key = \(displayName.lowercased()) WHERE id = \(user.rawValue)",
                logger: self.logger)
            guard let updated = try await Self.users([user], db, self.logger).first else { throw StoreError.userNotFound }
            return updated
        }
    }

    private func deleteSessions(of user: UserID, keeping: String?, _ db: PostgresConnection) async throws {
        try await db.query(
            "DELETE FROM sessions WHERE user_id = \(user.rawValue) AND token_hash IS DISTINCT FROM \(keeping)", logger: logger)
    }

    public func recordLastSeen(_ user: UserID, at time: Timestamp) async throws {
        try await execute("UPDATE users SET last_seen_at = \(time.milliseconds) WHERE id = \(user.rawValue)")
    }

    public func lastSeen(_ users: [UserID]) async throws -> [UserID: Timestamp] {
        guard !users.isEmpty else { return [:] }
        return try await read { db in
            let rows = try await db.rows(
                "SELECT id, last_seen_at FROM users WHERE id = ANY(\(users.map(\.rawValue))) AND last_seen_at IS NOT NULL", self.logger)
            return Dictionary(
                uniqueKeysWithValues: try rows.map { row in
                    let (id, seen) = try row.decode((String, Int64).self)
                    return (UserID(rawValue: id), Timestamp(milliseconds: seen))
                })
        }
    }
}
