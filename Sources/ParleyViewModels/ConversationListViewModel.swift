import Foundation
import Observation
import ParleySDK
import ParleyCore

/// The conversation list: rows sorted by last activity, live; search for someone to start a chat
/// with. Groups and invitations: `ConversationListViewModel+Groups.swift`.
@MainActor
@Observable
public final class ConversationListViewModel {
    /// One row of the list, ready to show.
    public struct Row: Identifiable, Equatable, Sendable {
        /// The conversation.
        public var id: ConversationID
        /// The other person's display name, or the group's title.
        public var title: String
        /// Initials for the avatar.
        public var initials: String
        /// The last message's first line as it is now: "You: " first when I sent it, "Ada: " in a
        /// group when someone else did; a membership entry as its line ("Ada added Grace"); "You
        /// deleted this message" or "This message was deleted" once deleted; empty before any.
        public var preview: String
        /// Whether the last message was edited (the preview shows its new text).
        public var isLastMessageEdited: Bool
        /// Whether the last message was deleted for everyone (the preview says so).
        public var isLastMessageDeleted: Bool
        /// The smart timestamp of the last activity ("9:41 AM", "Yesterday", "Monday", a date).
        public var timestamp: String
        /// Messages from others not yet read (never entries or mine).
        public var unreadCount: Int64
        /// Unread messages that mention me (an "@" badge); 0 outside groups.
        public var mentionCount: Int64
        /// Whether it is a group.
        public var isGroup: Bool
        /// A group I am no longer a member of (read-only).
        public var hasLeft: Bool
        /// Whether the other person is connected (only once both have written).
        public var isOnline: Bool
        /// The other person, to open the chat with.
        public var otherUserId: UserID?
        /// Muted now: no notifications while the app is closed (a muted icon).
        public var isMuted: Bool = false
        /// My messages the server refused, waiting in the outbox for a retry or a delete (a red "!"
        /// on the row, as they may have failed while the app was closed).
        public var notSentCount = 0
        /// The other person's profile photo, to show over the initials (loads without a token); `nil`
        /// in a group or when they have none. It follows their changes live.
        public var photoURL: URL?

        /// A row, e.g. for SwiftUI previews and tests.
        public init(
            id: ConversationID, title: String, initials: String, preview: String = "", timestamp: String = "", unreadCount: Int64 = 0,
            isOnline: Bool = false, otherUserId: UserID? = nil, mentionCount: Int64 = 0, isGroup: Bool = false, hasLeft: Bool = false,
            isLastMessageEdited: Bool = false, isLastMessageDeleted: Bool = false
        ) {
            self.isLastMessageEdited = isLastMessageEdited
            self.isLastMessageDeleted = isLastMessageDeleted
            self.mentionCount = mentionCount
            self.isGroup = isGroup
            self.hasLeft = hasLeft
            self.id = id
            self.title = title
            self.initials = initials
            self.preview = preview
            self.timestamp = timestamp
            self.unreadCount = unreadCount
            self.isOnline = isOnline
            self.otherUserId = otherUserId
        }
    }

    /// Loading, a list, empty, or failed with a message.
    public enum State: Equatable, Sendable {
        case loading
        case empty
        case error(String)
        case loaded
    }

    /// What an empty list says.
    public static let emptyText = "No conversations yet"

    /// The client the list reads from.
    public let client: ParleyClient
    /// The new-chat search box; results follow it.
    public var searchQuery = ""
    /// Users found by the search.
    public private(set) var searchResults: [User] = []
    /// Why the search failed, to show.
    public private(set) var searchError: String?
    /// Why the last group action (create, accept, decline) failed, to show.
    public internal(set) var actionError: String?
    @ObservationIgnored let formatter: SmartDateFormatter
    @ObservationIgnored let now: () -> Date

    /// A list over `client`'s conversations; `formatter` and `now` make times testable.
    public init(client: ParleyClient, formatter: SmartDateFormatter = SmartDateFormatter(), now: @escaping () -> Date = Date.init) {
        self.client = client
        self.formatter = formatter
        self.now = now
    }

    /// What the screen shows (invitations count as something to show).
    public var state: State {
        let nothing = rows.isEmpty && client.invitations.isEmpty
        switch client.listState {
        case .loading: return nothing ? .loading : .loaded
        case .failed(let message): return nothing ? .error(message) : .loaded
        case .loaded: return nothing ? .empty : .loaded
        }
    }

    /// The rows, most recent activity first.
    public var rows: [Row] {
        let now = now()
        let directMarks = client.directNameMarks()  // once for the list, not once per row
        var notSent: [ConversationID: Int] = [:]
        for entry in client.outbox.entries where entry.isSend {
            if case .failed = entry.state { notSent[entry.conversationId, default: 0] += 1 }
        }
        return client.sortedConversations().map { summary in
            let isGroup = summary.kind == .group
            let other = isGroup ? nil : client.otherMember(of: summary)
            let title = client.title(of: summary.id, marks: isGroup ? nil : directMarks) ?? GroupText.unknownPerson
            var row = Row(
                id: summary.id, title: title, initials: (other?.displayName ?? title).initials, preview: preview(of: summary),
                timestamp: formatter.listTimestamp(summary.lastActivityAt.date, now: now), unreadCount: client.unreadCount(summary.id),
                isOnline: other.flatMap { client.presence[$0.userId]?.online } ?? false, otherUserId: other?.userId,
                mentionCount: client.mentionCount(summary.id), isGroup: isGroup, hasLeft: summary.leftSeq != nil,
                isLastMessageEdited: summary.lastMessage?.editedAt != nil && summary.lastMessage?.isDeleted == false,
                isLastMessageDeleted: summary.lastMessage?.isDeleted == true)
            row.isMuted = client.isMuted(summary.id)
            row.notSentCount = notSent[summary.id] ?? 0
            row.photoURL = client.photoURL(other?.photo)
            return row
        }
    }

    /// The preview rules of ``Row/preview``.
    func preview(of summary: ConversationSummary) -> String {
        guard let last = summary.lastMessage else { return "" }
        let me = client.me.id
        if let entry = last.entry {
            let name = { (user: UserID) in self.client.distinguishableName(of: user, in: summary.id) }
            return GroupText.entryLines(entry, by: last.senderId, me: me, name: name).first ?? ""
        }
        if last.isDeleted { return last.senderId == me ? MessageText.deletedByMe : MessageText.deleted }
        let firstLine = MessageText.preview(last.text, attachments: last.attachments)
        if last.senderId == me { return "You: " + firstLine }
        guard summary.kind == .group else { return firstLine }
        return (client.distinguishableName(of: last.senderId, in: summary.id) ?? GroupText.someone) + ": " + firstLine
    }

    /// Loads the list again after a failure.
    public func retry() async {
        await client.reloadConversations()
    }

    /// Finds people to chat with by name or username prefix.
    public func search() async {
        let query = searchQuery.trimmingCharacters(in: .whitespaces)
        guard !query.isEmpty else {
            searchResults = []
            return
        }
        do {
            searchResults = try await client.searchUsers(query)
            searchError = nil
        } catch {
            searchResults = []
            searchError = (error as? ParleyClientError)?.message ?? "Search failed."
        }
    }

    /// A chat with `user`: their existing conversation, or a new one created by the first message.
    public func startChat(with user: User) -> ChatViewModel {
        ChatViewModel(client: client, conversation: .direct(client.me.id, user.id), otherUser: user, formatter: formatter, now: now)
    }

    /// The chat of a row, ready to show.
    public func chat(for row: Row) -> ChatViewModel {
        ChatViewModel(client: client, conversation: row.id, otherUser: nil, formatter: formatter, now: now)
    }
}
