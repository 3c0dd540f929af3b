import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels

/// The interactive terminal client: a conversation list, one open chat, live updates printed as lines.
///
/// Commands: `/list`, `/open N`, `/new USERNAME`, `/older`, `/retry`, `/help`, `/quit`, and the group
/// commands of `TerminalChat+Groups.swift`; any other line is sent to the open chat.
@MainActor
final class TerminalChat {
    let client: ParleyClient
    let list: ConversationListViewModel
    let printer: ChatPrinter
    var chat: ChatViewModel?
    var printedStatus: [ClientMessageID: MessageStatus] = [:]
    var rows: [ConversationListViewModel.Row] = []
    /// The connection state last printed: reconnect attempts while offline print nothing new.
    var shownOnline: Bool?

    init(session: Session, storage: ClientStorage) throws {
        client = try ParleyClient(session: session, storage: storage, heartbeat: try HeartbeatSetting.fromEnvironment())
        list = ConversationListViewModel(client: client)
        printer = ChatPrinter(client: client)
    }

    func run() async throws {
        say("Signed in as \(client.me.displayName) (@\(client.me.username)). Type /help for commands.")
        let events = client.events()
        client.start()
        if !list.rows.isEmpty { showList() }  // the cache, at once
        let printing = Task { for await event in events { await self.show(event) } }
        // Typing is announced while typing, from each edit of the input line.
        let input = LineEditor.shared.start { text in Task { @MainActor in self.typed(text) } }
        for await line in input {
            if await !handle(line) { break }
        }
        printing.cancel()
        client.stop()
        say("Bye.")
        LineEditor.shared.stop()
    }

    func typed(_ text: String) {
        guard let chat, !text.hasPrefix("/") else { return }
        chat.messageText = text
    }

    // MARK: commands

    func handle(_ line: String) async -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: " ", maxSplits: 1).map(String.init)
        switch parts.first {
        case "/quit", "/exit": return false
        case "/help":
            say("/list · /open N · /new USERNAME · /older · /retry · /quit · anything else is sent to the open chat")
            say(Self.groupHelp)
        case "/list": showList()
        case "/open":
            guard let number = parts.dropFirst().first.flatMap(Int.init), rows.indices.contains(number - 1) else {
                say("Usage: /open N (see /list)")
                return true
            }
            await open(list.chat(for: rows[number - 1]))
        case "/new":
            guard let username = parts.dropFirst().first else { say("Usage: /new USERNAME"); return true }
            do {
                let user = try await printer.user(named: username)
                await open(list.startChat(with: user))
            } catch {
                say("\(error)")
            }
        case "/older":
            guard let chat else { say("Open a chat first."); return true }
            let before = client.timeline(chat.conversation).count
            await chat.loadOlder()
            let items = client.timeline(chat.conversation)
            for item in items.prefix(items.count - before) { printer.lines(for: item, in: chat.conversation).forEach(say) }
            if items.count == before { say("(no older messages)") }
        case "/retry":
            guard let chat else { say("Open a chat first."); return true }
            for item in client.timeline(chat.conversation) where { if case .failed = item.status { true } else { false } }() {
                chat.retry(item)
            }
        case nil:
            break
        case let command? where Self.groupCommands.contains(command):
            await handleGroupCommand(command, parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        case let command? where command.hasPrefix("/") && !command.hasPrefix("//"):
            say("Unknown command \(command). /help lists them; to send a line that starts with '/', start it with '//'.")
        default:
            guard let chat else { say("Open a chat first: /list, then /open N, or /new USERNAME."); return true }
            chat.messageText = line.hasPrefix("//") ? String(line.dropFirst()) : line
            if let reason = chat.cannotSendReason {
                say(reason)
            } else if !chat.canSend {
                say(chat.characterCount > Validation.maxMessageCharacters ? "Too long (\(chat.characterCount) characters)." : "Nothing to send.")
            }
            chat.send()
            printStatusChanges()
        }
        return true
    }

    func open(_ chat: ChatViewModel) async {
        self.chat = chat
        if chat.isGroup {
            say("── \(chat.title) (\(chat.membersText)) ──")
        } else {
            say("── Chat with \(chat.title)\(chat.presenceText.isEmpty ? "" : " (\(chat.presenceText))") ──")
        }
        await chat.load()
        if chat.showsEmptyState { say(ChatViewModel.emptyText) }
        for item in chat.items {
            switch item {
            case .separator(let label): say("[\(label)]")
            case .message(let message, _, _, _), .entry(let message, _, _):
                printer.lines(for: message, in: chat.conversation).forEach(say)
                if let status = message.status { printedStatus[message.id] = status }
            }
        }
        if let reason = chat.cannotSendReason { say(reason) }
        markRead()
    }

    func showList() {
        rows = list.rows
        switch list.state {
        case .loading: say("Loading conversations…")
        case .empty: say(ConversationListViewModel.emptyText + " — start one with /new USERNAME")
        case .error(let message): say("Could not load conversations: \(message)")
        case .loaded:
            say("Conversations:")
            for (index, row) in rows.enumerated() { say("  " + printer.line(for: row, number: index + 1)) }
        }
        if !list.invitations.isEmpty { say("Invitations: \(list.invitations.count) — /invites") }
    }

    // MARK: live events

    func show(_ event: ClientEvent) async {
        switch event {
        case .connection(.online):
            if shownOnline != true { say("[online]") }
            shownOnline = true
        case .connection(.offline):
            if shownOnline != false { say("[offline — messages wait in the outbox; reconnecting]") }
            shownOnline = false
        case .connection(.connecting): break
        case .connection(.unauthorized):
            say("[signed out: the session was ended elsewhere or expired — sign in again with `parley chat login`]")
            shownOnline = false
        case .conversationsChanged: if chat == nil { showList() }
        case .message(let message):
            if message.conversationId.isGroup { await client.resolveNames(in: [message]) }  // "Grace joined", not "Someone joined"
            if message.conversationId == chat?.conversation {
                // Others' messages, and mine written on another device (this one printed its own).
                if message.senderId != client.me.id || printedStatus[message.clientId] == nil {
                    printer.lines(for: TimelineItem(message), in: message.conversationId).forEach(say)
                }
                markRead()
            } else if message.senderId != client.me.id {
                printer.notice(for: message).map(say)
            }
        case .typing(let conversation, _, let isTyping):
            if conversation == chat?.conversation, isTyping, let chat {
                say("… " + (chat.isGroup ? chat.typingText : "\(chat.title) is typing"))
            }
        case .invitation(let invitation):
            say("• \(invitation.inviter.displayName) invited you to “\(invitation.title)” — /invites, then /accept N or /decline N")
        case .groupReceipts:
            break
        case .presence(let user, let presence):
            guard let chat, !chat.isGroup, let summary = client.conversations[chat.conversation], client.otherMember(of: summary)?.userId == user
            else { break }
            say(presence.online ? "● \(chat.title) is online" : "○ \(chat.title) was \(SmartDateFormatter().lastSeen(presence.lastSeenAt?.date))")
        case .receipt:
            break
        case .sendFailed:
            break
        }
        printStatusChanges()
    }

    /// Prints my messages whose status changed: ✓, ✓✓, read, or failed.
    func printStatusChanges() {
        guard let chat else { return }
        for item in client.timeline(chat.conversation) where item.senderId == client.me.id {
            guard let status = item.status, printedStatus[item.id] != status else { continue }
            printedStatus[item.id] = status
            say("  \(ChatPrinter.mark(status)) \"\(item.text.prefix(40))\"")
        }
    }

    func markRead() {
        guard let chat, let last = client.timeline(chat.conversation).last(where: { $0.senderId != client.me.id })?.seq else { return }
        chat.markVisible(upTo: last)
    }
}
