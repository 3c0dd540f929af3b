import ArgumentParser
import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels

/// The non-interactive commands: each starts the client, does one thing, and exits.
@MainActor
final class ScriptedChat {
    let client: ParleyClient
    let printer: ChatPrinter

    init(session: Session, storage: ClientStorage) throws {
        client = try AccountClient.open(session, storage)
        printer = ChatPrinter(client: client)
    }

    /// Connects and waits for the first sync (or gives up after `seconds`).
    func connect(seconds: Double = 15) async throws {
        client.start()
        let deadline = Date().addingTimeInterval(seconds)
        while client.connectionState != .online || client.listState == .loading {
            if client.connectionState == .unauthorized {
                throw ChatFailure("Signed out: the session was ended elsewhere or expired. Sign in again with `parley chat login`.")
            }
            guard Date() < deadline else { throw ChatFailure("Cannot reach the server at \(client.session.serverURL).") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func list() async throws {
        try await connect()
        let rows = ConversationListViewModel(client: client).rows
        if rows.isEmpty { say(ConversationListViewModel.emptyText) }
        for (index, row) in rows.enumerated() { say(printer.line(for: row, number: index + 1)) }
        client.stop()
    }

    func send(_ text: String, to username: String) async throws {
        try await connect()
        let user = try await printer.user(named: username)
        let earlier = Set(client.outbox.entries.map(\.clientId))
        do {
            try client.send(text, in: .direct(client.me.id, user.id), to: user.id)
        } catch {
            throw ChatFailure(error.message)
        }
        // This message's own fate decides the exit status: an older message failed in the outbox
        // (a file that can no longer be read) is not this one, and a script that retried on it
        // would send this one twice.
        guard let mine = client.outbox.entries.first(where: { !earlier.contains($0.clientId) })?.clientId else {
            throw ChatFailure("Not sent: the message could not be kept in the outbox.")
        }
        let deadline = Date().addingTimeInterval(30)
        while let entry = client.outbox.entries.first(where: { $0.clientId == mine }) {
            if case .failed(let reason) = entry.state { throw ChatFailure("Not sent: \(reason)") }
            guard Date() < deadline else { throw ChatFailure("Not confirmed yet; it stays in the outbox and goes out next time.") }
            try await Task.sleep(for: .milliseconds(20))
        }
        say("Sent to \(user.displayName).")
        client.stop()
    }

    func tail(with username: String, count: Int, exitAfter: Int?) async throws {
        try await connect()
        let user = try await printer.user(named: username)
        let conversation = ConversationID.direct(client.me.id, user.id)
        let events = client.events()
        try? await client.loadLatest(conversation)
        for item in client.timeline(conversation).suffix(count) { printer.lines(for: item, in: conversation).forEach(say) }
        var seen = 0
        if exitAfter == 0 {
            client.stop()
            return
        }
        for await event in events {
            switch event {
            case .message(let message) where message.conversationId == conversation:
                printer.lines(for: TimelineItem(message), in: conversation).forEach(say)
                seen += 1
            case .messageUpdated(let message) where message.conversationId == conversation:
                // An edit, a delete for everyone or a reaction: the message again, as it is now.
                printer.lines(for: TimelineItem(message), in: conversation).forEach { say("changed: " + $0) }
            case .messageHidden(let ref) where ref.conversationId == conversation:
                say("A message was deleted for you (on another device).")
            default: continue
            }
            if let exitAfter, seen >= exitAfter { break }
        }
        client.stop()
    }
}
