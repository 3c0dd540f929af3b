import Foundation
import Observation
import ParleySDK
import ParleyCore

/// One chat, direct or group: its messages with date separators and statuses, the composer,
/// paging, presence and typing. What only groups have (sender names, entries, members, roles and
/// their actions) is in `ChatViewModel+Group.swift`; replies, reactions, edits and deletes in
/// `ChatViewModel+MessageActions.swift`; opening at a message found by search in
/// `ChatViewModel+Search.swift`.
@MainActor
@Observable
public final class ChatViewModel {
    /// One row of the chat: a day separator, a message with its time (and, in a group, who wrote
    /// it when it was not me), or a group's membership entry as its lines ("Ada added Grace").
    public enum Item: Identifiable, Equatable, Sendable {
        case separator(String)
        case message(TimelineItem, isMine: Bool, time: String, sender: String?)
        case entry(TimelineItem, lines: [String], time: String)

        /// A stable id for lists.
        public var id: String {
            switch self {
            case .separator(let label): "day-\(label)"
            case .message(let item, _, _, _), .entry(let item, _, _): item.id.rawValue
            }
        }
    }

    /// What an empty chat says.
    public static let emptyText = "Say hello!"
    /// Typing notifications go out at most this often while the user types.
    public static let typingInterval: TimeInterval = 3

    /// The client the chat reads from and sends through.
    public let client: ParleyClient
    /// The conversation shown (it may not exist on the server until the first message).
    public let conversation: ConversationID
    /// The composer's text; typing notifications follow it.
    public var messageText = "" {
        didSet { textChanged() }
    }
    /// True while the newest page loads.
    public private(set) var isLoading = false
    /// True while an older page loads.
    public private(set) var isLoadingOlder = false
    /// A problem to show (loading failed, message too long…).
    public internal(set) var errorMessage: String?
    /// The message the composer's text answers (``startReply(to:)``), if any.
    public internal(set) var replyingTo: TimelineItem?
    /// My message whose text the composer is changing (``startEditing(_:)``), if any.
    public internal(set) var editing: TimelineItem?
    /// The message to scroll to and mark, once opened from a search (``load(around:)``).
    public internal(set) var highlightedSeq: Int64?
    @ObservationIgnored let fallbackOther: User?
    @ObservationIgnored let formatter: SmartDateFormatter
    @ObservationIgnored let now: () -> Date
    @ObservationIgnored var lastTypingSent: Date?

    /// A chat in `conversation`; `otherUser` names it before the conversation is known.
    public init(
        client: ParleyClient, conversation: ConversationID, otherUser: User?, formatter: SmartDateFormatter = SmartDateFormatter(),
        now: @escaping () -> Date = Date.init
    ) {
        self.client = client
        self.conversation = conversation
        self.fallbackOther = otherUser
        self.formatter = formatter
        self.now = now
    }

    // MARK: header

    /// The other person of a direct conversation (`nil` in a group).
    var other: (id: UserID, name: String)? {
        guard !isGroup else { return nil }
        if let summary = client.conversations[conversation], let member = client.otherMember(of: summary) {
            return (member.userId, member.displayName)
        }
        return fallbackOther.map { ($0.id, $0.displayName) }
    }

    /// The other person's display name, or the group's title.
    public var title: String {
        client.title(of: conversation) ?? (isGroup ? GroupText.group : other?.name ?? "")
    }

    /// The other person's profile photo for the header (loads without a token); `nil` in a group or
    /// when they have none. It follows their changes live; before the chat exists, it is the one the
    /// user was found with, unless the client has heard of them since.
    public var photoURL: URL? {
        guard !isGroup else { return nil }
        if let summary = client.conversations[conversation], let member = client.otherMember(of: summary) { return client.photoURL(member.photo) }
        guard let fallbackOther else { return nil }
        return client.photoURL(client.knows(fallbackOther.id) ? client.photoPath(of: fallbackOther.id) : fallbackOther.photo)
    }

    /// Whether someone else is typing now.
    public var otherUserTyping: Bool { client.typingUser(in: conversation, now: now()) != nil }

    /// "typing…" in a direct conversation; in a group who: "Ada is typing…", "Ada and Grace are
    /// typing…", "3 people are typing…" (``GroupText/typing(_:)``). Empty when nobody is.
    public var typingText: String {
        let typists = client.typingUsers(in: conversation, now: now())
        guard isGroup else { return typists.isEmpty ? "" : "typing…" }
        return GroupText.typing(typists.map { name(of: $0) })
    }

    /// "online", "last seen …", or empty when unknown.
    public var presenceText: String {
        guard let id = other?.id, let presence = client.presence[id] else { return "" }
        return presence.online ? "online" : formatter.lastSeen(presence.lastSeenAt?.date, now: now())
    }

    /// True when not connected (show a banner; sending still works, later).
    public var isOffline: Bool { client.connectionState != .online }

    // MARK: messages

    /// The rows to show: messages in order with day separators.
    public var items: [Item] {
        var items: [Item] = []
        var lastDay: String?
        let now = now()
        let marks = isGroup ? client.nameMarks(in: conversation) : nil  // once for the chat, not once per row
        for message in client.timeline(conversation) {
            let day = formatter.daySeparator(message.createdAt.date, now: now)
            if day != lastDay {
                items.append(.separator(day))
                lastDay = day
            }
            let time = formatter.time(message.createdAt.date)
            if let entry = message.entry {
                let lines = GroupText.entryLines(entry, by: message.senderId, me: client.me.id) { name(of: $0, marks: marks) }
                items.append(.entry(message, lines: lines, time: time))
            } else {
                let mine = message.senderId == client.me.id
                items.append(.message(message, isMine: mine, time: time, sender: isGroup && !mine ? name(of: message.senderId, marks: marks) : nil))
            }
        }
        return items
    }

    /// True when there is nothing to show yet ("Say hello!").
    public var showsEmptyState: Bool { !isLoading && client.timeline(conversation).isEmpty }
    /// Whether older messages can be loaded.
    public var hasOlder: Bool { client.hasOlderMessages(in: conversation) ?? (client.conversations[conversation] != nil) }

    /// Shows the cache, then the newest page from the server.
    public func load() async {
        guard client.conversations[conversation] != nil else { return }
        isLoading = client.timeline(conversation).isEmpty
        defer { isLoading = false }
        do {
            try await client.loadLatest(conversation)
            if isGroup { await client.resolveNames(in: conversation) }
            errorMessage = nil
        } catch {
            errorMessage = (error as? ParleyClientError)?.message ?? "Could not load messages."
        }
    }

    /// The previous page of 50.
    public func loadOlder() async {
        guard hasOlder, !isLoadingOlder else { return }
        isLoadingOlder = true
        defer { isLoadingOlder = false }
        do {
            try await client.loadOlder(conversation)
            if isGroup { await client.resolveNames(in: conversation) }
        } catch {
            errorMessage = (error as? ParleyClientError)?.message ?? "Could not load older messages."
        }
    }

    /// The newest message shown on screen: marks everything up to it read.
    public func markVisible(upTo seq: Int64) {
        client.markRead(conversation, upTo: seq)
    }
}
