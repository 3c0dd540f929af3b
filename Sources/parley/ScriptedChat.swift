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
        client = try ParleyClient(session: session, storage: storage, heartbeat: try HeartbeatSetting.fromEnvironment())
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
        do {
            try client.send(text, in: .direct(client.me.id, user.id), to: user.id)
        } catch {
            throw ChatFailure(error.message)
        }
        let deadline = Date().addingTimeInterval(30)
        while !client.outbox.entries.isEmpty {
            if case .failed(let reason)? = client.outbox.entries.first?.state { throw ChatFailure("Not sent: \(reason)") }
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
        for await event in events {
            guard case .message(let message) = event, message.conversationId == conversation else { continue }
            printer.lines(for: TimelineItem(message), in: conversation).forEach(say)
            seen += 1
            if let exitAfter, seen >= exitAfter { break }
        }
        client.stop()
    }
}

/// How chats look in the terminal.
@MainActor
struct ChatPrinter {
    let client: ParleyClient
    let formatter = SmartDateFormatter()

    func line(for row: ConversationListViewModel.Row, number: Int) -> String {
        var line = "\(number). \(row.title)"
        if row.isGroup { line += row.hasLeft ? " [group, left]" : " [group]" }
        if row.isOnline { line += " ●" }
        if row.unreadCount > 0 { line += " (\(row.unreadCount) unread\(row.mentionCount > 0 ? ", @\(row.mentionCount)" : ""))" }
        if !row.preview.isEmpty { line += " — \(row.preview)" }
        return line + " · \(row.timestamp)"
    }

    /// A message as "12:01 Ada Lovelace: text ✓", or an entry as one line per sentence: "12:01 · Ada added Grace".
    func lines(for item: TimelineItem, in conversation: ConversationID) -> [String] {
        let time = formatter.time(item.createdAt.date)
        if let entry = item.entry {
            return GroupText.entryLines(entry, by: item.senderId, me: client.me.id) { name(of: $0, in: conversation) }.map { "\(time) · \($0)" }
        }
        let sender = item.senderId == client.me.id ? "You" : name(of: item.senderId, in: conversation)
        let mark = item.status.map { " " + Self.mark($0) } ?? ""
        return ["\(time) \(sender): \(item.text)\(mark)"]
    }

    func name(of user: UserID, in conversation: ConversationID) -> String {
        client.displayName(of: user, in: conversation) ?? GroupText.someone
    }

    /// One line for news from a chat that is not open: "• New message from Ada: hi", "• Ada in Trip: hi".
    func notice(for message: Message) -> String? {
        guard let summary = client.conversations[message.conversationId] else { return nil }
        guard summary.kind == .group else {
            return "• New message from \(client.otherMember(of: summary)?.displayName ?? "someone"): \(message.text)"
        }
        let title = summary.title ?? "a group"
        if let entry = message.entry {
            let line = GroupText.entryLines(entry, by: message.senderId, me: client.me.id) { name(of: $0, in: summary.id) }.first ?? ""
            return "• \(title): \(line)"
        }
        return "• \(name(of: message.senderId, in: summary.id)) in \(title): \(message.text)"
    }

    static func mark(_ status: MessageStatus) -> String {
        switch status {
        case .sending: "(sending)"
        case .sent: "✓"
        case .delivered: "✓✓"
        case .read: "✓✓ read"
        case .failed(let reason): "! failed: \(reason) — /retry"
        }
    }

    /// Finds a user by exact username.
    func user(named username: String) async throws -> User {
        let wanted = username.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "@ "))
        guard let user = try await client.searchUsers(wanted).first(where: { $0.username == wanted }) else {
            throw ChatFailure("No user named '\(wanted)'.")
        }
        return user
    }
}
