import GRDB

extension Database {
    /// `body` inside a savepoint whose statements are prepared once per connection. GRDB's
    /// `inSavepoint` prepares `SAVEPOINT` and `RELEASE` on every call, and the group commit opens one
    /// savepoint per job and one per message of a batch, so that preparation showed in profiles.
    /// On a throw, everything `body` wrote is rolled back and the error rethrown; the enclosing
    /// transaction goes on.
    func inCachedSavepoint<T>(named name: String, _ body: () throws -> T) throws -> T {
        try cachedStatement(sql: "SAVEPOINT \(name)").execute()
        do {
            let value = try body()
            try cachedStatement(sql: "RELEASE SAVEPOINT \(name)").execute()
            return value
        } catch {
            // Rolling back keeps the savepoint open; releasing it then leaves nothing behind.
            try cachedStatement(sql: "ROLLBACK TO SAVEPOINT \(name)").execute()
            try cachedStatement(sql: "RELEASE SAVEPOINT \(name)").execute()
            throw error
        }
    }
}
