import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels

/// The interactive terminal client: a conversation list, one open chat, live updates printed as lines.
///
/// Commands: `/list`, `/open N`, `/new USERNAME`, `/older`, `/retry`, `/help`, `/quit`, the group
/// commands of `TerminalChat+Groups.swift`, the message commands of
/// `TerminalChat+MessageActions.swift` and `/search` of `TerminalChat+Search.swift`; any other line
/// is sent to the open chat. `/open N` opens what was listed last: entry N of `/list`, or result N
/// of `/search`.
@MainActor
final class TerminalChat {
    let client: ParleyClient
    let list: ConversationListViewModel
    let printer: ChatPrinter
    var chat: ChatViewModel?
    /// While a chat loads to be opened: its events print nothing (the page printed after the load
    /// holds them, numbered in order; one printed before it would take the first numbers).
    var opening = false
    var printedStatus: [ClientMessageID: MessageStatus] = [:]
    var rows: [ConversationListViewModel.Row] = []
    /// The connection state last printed: reconnect attempts while offline print nothing new.
    var shownOnline: Bool?
    /// When each person was last said to be typing in each chat: a typist turning it on and off
    /// over and over is said once in ``typingRepeat``.
    var typingShown: [String: ContinuousClock.Instant] = [:]
    static let typingRepeat = Duration.seconds(10)
    /// The open chat's message numbers.
    let numbers = MessageNumbers()
    /// Message search (`/search`, `/more`).
    let search: SearchViewModel
    /// The search results in the order numbered on screen; while there are some, `/open N` opens
    /// one of them (`/list` empties them, and `/open N` opens a row of the list again).
    var searchHits: [SearchHit] = []
    /// The invitations as `/invites` last numbered them (`/accept N`, `/decline N`).
    var shownInvitations: [ConversationListViewModel.InvitationRow] = []

    /// How long the start waits to be caught up before it prints the list as last synced.
    let catchUpWait: Duration
    /// How long the start waits for the notification settings, and a list for the names its
    /// previews need (a server slow to answer is not waited for as long as a request may take).
    static let namesWait = Duration.seconds(2)
    /// The lines the last list printed.
    var listed: [String] = []

    /// Where the local copy is (what quitting says of messages not sent yet depends on it).
    let storage: ClientStorage

    init(session: Session, storage: ClientStorage, catchUpWait: Duration = .seconds(5)) throws {
        self.storage = storage
        self.catchUpWait = catchUpWait
        client = try AccountClient.open(session, storage)
        list = ConversationListViewModel(client: client)
        search = SearchViewModel(client: client)
        printer = ChatPrinter(client: client)
    }

    func run() async throws {
        say("Signed in as \(client.me.displayName) (@\(client.me.username)). Type /help for commands.")
        // For the [muted] marks (/mute works without them); not waited for long: a server that is
        // not there holds a request until its 30-s timeout, and the start with it.
        await waiting(atMost: Self.namesWait) { [client] in _ = try? await client.loadNotificationSettings() }
        let events = client.events()
        client.start()
        // The list once caught up, so what changed while this client was closed (an edit, a delete
        // for everyone) is never printed as it was; the cache only when the server is not there.
        // What happened meanwhile (`[online]` too) is printed after it, from `events`.
        if await caughtUp(within: catchUpWait) {
            await showList()
        } else if !list.rows.isEmpty {
            if client.connectionState != .unauthorized { say("[not connected yet — the list as last synced]") }
            await showList()
        }
        let printing = Task { for await event in events { await self.show(event) } }
        // Typing is announced while typing, from each edit of the input line.
        let input = LineEditor.shared.start { text in Task { @MainActor in self.typed(text) } }
        for await line in input {
            if await !handle(line) { break }
        }
        printing.cancel()
        client.stop()
        let waiting = client.outbox.entries.filter { if case .failed = $0.state { false } else { true } }.count
        if waiting > 0 {
            say(
                AccountClient.isReadOnly(storage)
                    ? "\(waiting) message(s) not sent yet are lost: your local copy cannot be written."
                    : "\(waiting) message(s) not sent yet go out the next time you start parley chat.")
        }
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
        // A pasted block of lines is a message, never a command (its first line could be one).
        let parts = line.contains("\n") ? [""] : trimmed.split(separator: " ", maxSplits: 1).map(String.init)
        switch parts.first {
        case "/quit", "/exit": return false
        case "/help":
            say("/list · /open N · /new USERNAME · /older · /newer · /retry · /name NEW NAME · /quit · anything else is sent to the open chat")
            Self.searchHelp.forEach(say)
            say(Self.messageHelp)
            say(Self.fileHelp)
            say(Self.groupHelp)
            say(Self.notificationHelp)
        case "/list":
            searchHits = []
            await showList()
        case "/open" where !searchHits.isEmpty:
            await openSearchResult(parts.dropFirst().first.flatMap(Int.init))
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
            await showOlder(in: chat)
        case "/newer":
            guard let chat else { say("Open a chat first."); return true }
            showNewer(in: chat)
        case "/retry":
            guard let chat else { say("Open a chat first."); return true }
            let failed = client.timeline(chat.conversation).filter { if case .failed = $0.status { true } else { false } }
            if failed.isEmpty {
                say("Nothing to retry.")
            } else if let reason = chat.cannotSendReason {
                say("\(reason) (/delete N me takes a message that was not sent away)")
            } else {
                say("Sending again: \(failed.count) message\(failed.count == 1 ? "" : "s").")
                failed.forEach(chat.retry)
                // Each says how it goes again, a failure as soon as the same one: a file gone since
                // fails at once, with the reason it had before.
                for item in failed { printedStatus[item.id] = nil }
                printStatusChanges()
            }
        case nil:
            break
        case "/name": await changeName(parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        case "/search": await runSearch(parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        case "/more": await showMoreResults()
        case let command? where Self.messageCommands.contains(command):
            await handleMessageCommand(command, parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        case let command? where Self.fileCommands.contains(command):
            await handleFileCommand(command, parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        case let command? where Self.notificationCommands.contains(command):
            await handleNotificationCommand(command, parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        case let command? where Self.groupCommands.contains(command):
            await handleGroupCommand(command, parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        case let command? where command.hasPrefix("/") && !command.hasPrefix("//"):
            say("Unknown command \(command). /help lists them; to send a line that starts with '/', start it with '//'.")
        default:
            guard let chat else { say("Open a chat first: /list, then /open N, or /new USERNAME."); return true }
            send(line.hasPrefix("//") ? String(line.dropFirst()) : line, in: chat)
            printStatusChanges()
        }
        return true
    }

    /// Opens `chat` and prints its history: all of it that is held, or, for a chat opened at a
    /// search result (`loaded` and `highlightedSeq` set), the messages around that one.
    func open(_ chat: ChatViewModel, loaded: Bool = false) async {
        self.chat = chat
        numbers.reset()
        if chat.isGroup {
            say("── \(chat.title) (\(chat.membersText)) ──")
        } else {
            say("── Chat with \(chat.title)\(chat.presenceText.isEmpty ? "" : " (\(chat.presenceText))") ──")
        }
        if !loaded {
            opening = true
            if client.connectionState == .online {
                await chat.load()
            } else {
                // Offline, what is held prints at once: a request would wait for its timeout (30 s)
                // to fail, and every line typed meanwhile with it.
                await waiting(atMost: Self.namesWait) { await chat.load() }
            }
            opening = false
        }
        guard self.chat === chat else { return }  // another chat was opened meanwhile
        if chat.showsEmptyState { say(ChatViewModel.emptyText) }
        for item in Self.window(of: chat.items, around: chat.highlightedSeq) {
            switch item {
            case .separator(let label): say("[\(label)]")
            case .message(let message, _, _, _), .entry(let message, _, _):
                printItem(message, marked: message.seq != nil && message.seq == chat.highlightedSeq)
            }
        }
        if let reason = chat.cannotSendReason { say(reason) }
        let newer = unprinted(in: chat, older: false).count
        if newer > 0 { say("(\(newer) newer message\(newer == 1 ? "" : "s") — /newer)") }
        markRead()
        printStatusChanges()
    }

    /// Prints the conversation list (numbered for `/open N`), the people its group previews name
    /// looked up first when online ("Ada removed Carol", not "Someone"); `onlyIfChanged` (the stream's
    /// changes): not when it would print what the last list printed, nor once a chat is open.
    func showList(onlyIfChanged: Bool = false) async {
        if client.connectionState == .online {  // offline, a lookup would only wait to fail
            let previews = list.rows.compactMap { client.conversations[$0.id]?.lastMessage }
            await waiting(atMost: Self.namesWait) { [client] in await client.resolveNames(in: previews) }
        }
        // A list the stream asked for is not printed over a chat opened meanwhile (a new group's).
        if onlyIfChanged, chat != nil || !searchHits.isEmpty { return }
        var lines: [String] = []
        switch list.state {
        case .loading: lines.append("Loading conversations…")
        case .empty: lines.append(ConversationListViewModel.emptyText + " — start one with /new USERNAME")
        case .error(let message): lines.append("Could not load conversations: \(message)")
        case .loaded:
            lines.append("Conversations:")
            for (index, row) in list.rows.enumerated() { lines.append("  " + printer.line(for: row, number: index + 1)) }
        }
        if !list.invitations.isEmpty { lines.append("Invitations: \(list.invitations.count) — /invites") }
        if onlyIfChanged, lines == listed, rows == list.rows { return }
        rows = list.rows
        listed = lines
        lines.forEach(say)
    }

    /// Runs `work`, waiting for it `limit` at most, then cancels it (work it shares with others, a
    /// name lookup, goes on).
    private func waiting(atMost limit: Duration, for work: @escaping @MainActor @Sendable () async -> Void) async {
        let (done, finish) = AsyncStream<Void>.makeStream()
        let worker = Task { @MainActor in
            await work()
            finish.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            finish.finish()
        }
        for await _ in done {}
        timer.cancel()
        worker.cancel()  // a request still waiting is given up (quitting would wait for it otherwise)
    }

    /// Whether the client is online and has caught up within `limit` (else the wait ends: offline,
    /// or signed out, which the event printer says).
    private func caughtUp(within limit: Duration) async -> Bool {
        // connect() waits for ever while offline: given up after `limit`, the list goes out as last synced.
        await waiting(atMost: limit) { [client] in _ = try? await client.connect() }
        return client.connectionState == .online
    }
}
