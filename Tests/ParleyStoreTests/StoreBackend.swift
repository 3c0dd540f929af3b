import Foundation
import ParleyCore
import Logging
import ParleyPostgres
import ParleySQLite
import ParleyTestSupport
import ParleyStore
import Testing

/// A backend the conformance suite runs against. Adding a backend = adding a case here.
struct StoreBackend: CustomTestStringConvertible, Sendable {
    let name: String
    /// Makes an empty database and returns where it is (a file path or a URL).
    let newDatabase: @Sendable () async throws -> String
    /// Opens a store on a database; opening one database twice is what two nodes (or two
    /// processes) do.
    let open: @Sendable (String) async throws -> any ParleyStore

    var testDescription: String { name }

    func make() async throws -> any ParleyStore { try await open(newDatabase()) }

    static let all: [StoreBackend] = [
        StoreBackend(name: "SQLite") {
            FileManager.default.temporaryDirectory.appendingPathComponent("parley-store-\(UUID().uuidString)/test.sqlite").path
        } open: { path in
            try SQLiteStore(path: path, durability: .normal)
        },
        StoreBackend(name: "PostgreSQL") {
            try await PostgresTestServer.freshDatabaseAsync()
        } open: { url in
            try await PostgresStore.connect(DatabaseURL(url), poolSize: 8, logger: Logger(label: "test"))
        },
    ]
}

/// Small helpers so each rule's test reads as the rule.
extension ParleyStore {
    func makeUser(_ username: String, displayName: String? = nil) async throws -> User {
        try await createUser(NewUser(username: username, displayName: displayName ?? username.capitalized, passwordHash: "hash"), now: .now())
    }

    func send(_ text: String, from sender: UserID, to target: SendTarget, clientId: ClientMessageID = .random(), at now: Timestamp = .now()) async throws
        -> SendOutcome
    {
        try await send(NewMessage(sender: sender, clientId: clientId, target: target, text: text), now: now)
    }

    /// Ada and Grace, contacts (a message each way, so Grace joins rather than being invited), in a
    /// group Ada owns.
    func adaAndGraceInAGroup(titled title: String) async throws -> (ada: User, grace: User, group: ConversationID) {
        let ada = try await makeUser("ada"), grace = try await makeUser("grace")
        _ = try await send("hi", from: ada.id, to: .user(grace.id))
        _ = try await send("hi!", from: grace.id, to: .user(ada.id))
        let group = try await createGroup(
            NewGroup(creator: ada.id, clientId: .random(), title: title, memberIds: [grace.id], maxMembers: 256), now: .now()
        ).conversationId
        return (ada, grace, group)
    }

    func allEvents(of user: UserID, after: Int64 = 0) async throws -> [StreamEvent] {
        guard case .events(let events, _) = try await events(of: user, after: after, limit: 10_000) else { return [] }
        return events
    }
}
