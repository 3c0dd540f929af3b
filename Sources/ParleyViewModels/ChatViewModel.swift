import Foundation
import Observation
import ParleySDK
import ParleyCore

/// One chat: its messages with date separators and statuses, the composer, paging, presence and typing.
@MainActor
@Observable
public final class ChatViewModel {
    /// One row of the chat: a day separator, or a message with its time.
    public enum Item: Identifiable, Equatable, Sendable {
        case separator(String)
        case message(TimelineItem, isMine: Bool, time: String)

        /// A stable id for lists.
        public var id: String {
            switch self {
            case .separator(let label): "day-\(label)"
            case .message(let item, _, _): item.id.rawValue
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
    public private(set) var errorMessage: String?
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

    var other: (id: UserID, name: String)? {
        if let summary = client.conversations[conversation], let member = client.otherMember(of: summary) {
            return (member.userId, member.displayName)
        }
        return fallbackOther.map { ($0.id, $0.displayName) }
    }

    /// The other person's display name.
    public var title: String { other?.name ?? "" }

    /// Whether the other person is typing now.
    public var otherUserTyping: Bool { client.typingUser(in: conversation, now: now()) != nil }

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
        for message in client.timeline(conversation) {
            let day = formatter.daySeparator(message.createdAt.date, now: now)
            if day != lastDay {
                items.append(.separator(day))
                lastDay = day
            }
            items.append(.message(message, isMine: message.senderId == client.me.id, time: formatter.time(message.createdAt.date)))
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
        } catch {
            errorMessage = (error as? ParleyClientError)?.message ?? "Could not load older messages."
        }
    }

    /// The newest message shown on screen: marks everything up to it read.
    public func markVisible(upTo seq: Int64) {
        client.markRead(conversation, upTo: seq)
    }

    // MARK: composer

    /// Characters as the server counts them, after the same normalization.
    public var characterCount: Int {
        Validation.normalizedMessageText(messageText).count
    }

    /// Characters left before the limit (negative when over).
    public var remainingCharacters: Int { Validation.maxMessageCharacters - characterCount }
    /// Whether to show the counter (near the limit only).
    public var showsCharacterCounter: Bool { characterCount > Validation.messageCounterThreshold }
    /// Whether the composer's text can be sent (not blank, within the limit).
    public var canSend: Bool {
        guard case .success = Validation.messageText(messageText) else { return false }
        return true
    }

    /// Sends the composer's text (trimmed, validated like the server does) and clears it.
    public func send() {
        guard canSend else { return }
        do {
            try client.send(messageText, in: conversation, to: other?.id)
            messageText = ""
            errorMessage = nil
        } catch {
            errorMessage = error.message
        }
    }

    /// Sends a failed message again.
    public func retry(_ item: TimelineItem) {
        client.retry(item.id)
    }

    /// Deletes a failed message.
    public func delete(_ item: TimelineItem) {
        client.deleteFailed(item.id)
    }

    /// Typing notifications, throttled; an emptied composer stops them at once.
    private func textChanged() {
        let typing = !messageText.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        if typing {
            if lastTypingSent.map({ now().timeIntervalSince($0) >= Self.typingInterval }) ?? true {
                lastTypingSent = now()
                client.setTyping(true, in: conversation)
            }
        } else if lastTypingSent != nil {
            lastTypingSent = nil
            client.setTyping(false, in: conversation)
        }
    }
}
