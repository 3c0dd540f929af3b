import Foundation
import ParleySDK
import ParleyViewModels

/// A Parley bot in a few lines of the SDK: signs in (or registers), connects, and answers every
/// message it receives with "echo: <text>" in the same chat, through the outbox (so a reply written
/// while the connection drops still goes out, once).
///
///     EchoBot <server URL> <username> <password> [replies]
///
/// Exits after `replies` answers (default: never), printing its conversation list on the way out.
@main
struct EchoBot {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.count >= 3, let server = URL(string: arguments[arguments.startIndex]) else {
            FileHandle.standardError.write(Data("usage: EchoBot <server URL> <username> <password> [replies]\n".utf8))
            exit(64)
        }
        let username = arguments[arguments.startIndex + 1], password = arguments[arguments.startIndex + 2]
        let limit = arguments.count > 3 ? Int(arguments[arguments.startIndex + 3]) ?? .max : .max
        do {
            try await run(server: server, username: username, password: password, replies: limit)
        } catch {
            FileHandle.standardError.write(Data("EchoBot: \(error)\n".utf8))
            exit(1)
        }
    }

    @MainActor
    static func run(server: URL, username: String, password: String, replies limit: Int) async throws {
        let storage = ClientStorage(directory: FileManager.default.temporaryDirectory.appendingPathComponent("echo-bot-\(username)"))
        let client: ParleyClient
        do {
            client = try await ParleyClient.signIn(to: server, username: username, password: password, storage: storage)
        } catch let error as ParleyClientError where error.code == .invalidCredentials {
            client = try await ParleyClient.register(
                to: server, username: username, displayName: "Echo Bot", password: password, storage: storage)
        }
        let events = client.events()
        try await client.connect()
        say("online as \(client.session.user.username)")

        var replies = 0
        for await event in events {
            // Membership entries ("Ada added Grace") are not something to answer.
            guard case .message(let message) = event, message.senderId != client.session.user.id, message.entry == nil else { continue }
            try client.send("echo: \(message.text)", in: message.conversationId)
            replies += 1
            if replies >= limit { break }
        }
        // Wait until every reply is confirmed by the server, then show the list as an app would.
        while !client.outbox.entries.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        let list = ConversationListViewModel(client: client)
        for row in list.rows { say("\(row.title): \(row.preview)") }
        client.stop()
    }

    /// One line to standard output at once (not held in a buffer when piped).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
