import Foundation
import ParleyClient
import ParleyCore
import ParleyViewModels

/// The interactive terminal client: a conversation list, one open chat, live updates printed as lines.
///
/// Commands: `/list`, `/open N`, `/new USERNAME`, `/older`, `/retry`, `/help`, `/quit`; any other line
/// is sent to the open chat.
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
        print("Signed in as \(client.me.displayName) (@\(client.me.username)). Type /help for commands.")
        let events = client.events()
        client.start()
        if !list.rows.isEmpty { showList() }  // the cache, at once
        let printing = Task { for await event in events { self.show(event) } }
        for await line in Self.lines() {
            if await !handle(line) { break }
        }
        client.stop()
        printing.cancel()
        print("Bye.")
    }

    /// Standard input as lines, read on a thread of its own.
    static func lines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        return stream
    }

    // MARK: commands

    func handle(_ line: String) async -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: " ", maxSplits: 1).map(String.init)
        switch parts.first {
        case "/quit", "/exit": return false
        case "/help": print("/list · /open N · /new USERNAME · /older · /retry · /quit · anything else is sent to the open chat")
        case "/list": showList()
        case "/open":
            guard let number = parts.dropFirst().first.flatMap(Int.init), rows.indices.contains(number - 1) else {
                print("Usage: /open N (see /list)")
                return true
            }
            await open(list.chat(for: rows[number - 1]))
        case "/new":
            guard let username = parts.dropFirst().first else { print("Usage: /new USERNAME"); return true }
            do {
                let user = try await printer.user(named: username)
                await open(list.startChat(with: user))
            } catch {
                print("\(error)")
            }
        case "/older":
            guard let chat else { print("Open a chat first."); return true }
            let before = client.timeline(chat.conversation).count
            await chat.loadOlder()
            let items = client.timeline(chat.conversation)
            for item in items.prefix(items.count - before) { print(printer.line(for: item)) }
            if items.count == before { print("(no older messages)") }
        case "/retry":
            guard let chat else { print("Open a chat first."); return true }
            for item in client.timeline(chat.conversation) where { if case .failed = item.status { true } else { false } }() {
                chat.retry(item)
            }
        case nil:
            break
        default:
            guard let chat else { print("Open a chat first: /list, then /open N, or /new USERNAME."); return true }
            chat.messageText = line
            if !chat.canSend { print(chat.characterCount > Validation.maxMessageCharacters ? "Too long (\(chat.characterCount) characters)." : "Nothing to send.") }
            chat.send()
            printStatusChanges()
        }
        return true
    }

    func open(_ chat: ChatViewModel) async {
        self.chat = chat
        print("── Chat with \(chat.title)\(chat.presenceText.isEmpty ? "" : " (\(chat.presenceText))") ──")
        await chat.load()
        if chat.showsEmptyState { print(ChatViewModel.emptyText) }
        for item in chat.items {
            switch item {
            case .separator(let label): print("[\(label)]")
            case .message(let message, _, _):
                print(printer.line(for: message))
                if let status = message.status { printedStatus[message.id] = status }
            }
        }
        markRead()
    }

    func showList() {
        rows = list.rows
        switch list.state {
        case .loading: print("Loading conversations…")
        case .empty: print(ConversationListViewModel.emptyText + " — start one with /new USERNAME")
        case .error(let message): print("Could not load conversations: \(message)")
        case .loaded:
            print("Conversations:")
            for (index, row) in rows.enumerated() { print("  " + printer.line(for: row, number: index + 1)) }
        }
    }

    // MARK: live events

    func show(_ event: ClientEvent) {
        switch event {
        case .connection(.online):
            if shownOnline != true { print("[online]") }
            shownOnline = true
        case .connection(.offline):
            if shownOnline != false { print("[offline — messages wait in the outbox; reconnecting]") }
            shownOnline = false
        case .connection(.connecting): break
        case .conversationsChanged: if chat == nil { showList() }
        case .message(let message):
            if message.conversationId == chat?.conversation {
                if message.senderId != client.me.id { print(printer.line(for: TimelineItem(message))) }
                markRead()
            } else if message.senderId != client.me.id {
                let name = client.conversations[message.conversationId].flatMap(client.otherMember)?.displayName ?? "someone"
                print("• New message from \(name): \(message.text)")
            }
        case .typing(let conversation, _, let isTyping):
            if conversation == chat?.conversation, isTyping, let chat { print("… \(chat.title) is typing") }
        case .presence(let user, let presence):
            guard let chat, let summary = client.conversations[chat.conversation], client.otherMember(of: summary)?.userId == user else { break }
            print(presence.online ? "● \(chat.title) is online" : "○ \(chat.title) was \(SmartDateFormatter().lastSeen(presence.lastSeenAt?.date))")
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
            print("  \(ChatPrinter.mark(status)) \"\(item.text.prefix(40))\"")
        }
    }

    func markRead() {
        guard let chat, let last = client.timeline(chat.conversation).last(where: { $0.senderId != client.me.id })?.seq else { return }
        chat.markVisible(upTo: last)
    }
}
