import Foundation
import ParleyCore
import ParleySQLite
import ParleyStore
import Testing

/// A backend the conformance suite runs against. Adding a backend = adding a case here.
struct StoreBackend: CustomTestStringConvertible, Sendable {
    let name: String
    let make: @Sendable () async throws -> any ParleyStore

    var testDescription: String { name }

    static let all: [StoreBackend] = [
        StoreBackend(name: "SQLite") {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-store-\(UUID().uuidString)")
            return try SQLiteStore(path: directory.appendingPathComponent("test.sqlite").path, durability: .normal)
        }
    ]
}

/// Small helpers so each rule's test reads as the rule.
extension ParleyStore {
    func makeUser(_ username: String, displayName: String? = nil) async throws -> User {
        try await createUser(NewUser(username: username, displayName: displayName ?? username.capitalized, passwordHash: "hash"), now: .now())
    }

    func send(_ text: String, from sender: UserID, to target: SendTarget, clientId: ClientMessageID = .random(), at now: Timestamp = .now()) async throws -> SendOutcome {
        try await send(NewMessage(sender: sender, clientId: clientId, target: target, text: text), now: now)
    }

    func allEvents(of user: UserID, after: Int64 = 0) async throws -> [StreamEvent] {
        guard case .events(let events, _) = try await events(of: user, after: after, limit: 10_000) else { return [] }
        return events
    }
}
