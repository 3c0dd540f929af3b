import Foundation
import Observation
import ParleySDK
import ParleyCore

/// The conversation list: rows sorted by last activity, live; search for someone to start a chat with.
@MainActor
@Observable
public final class ConversationListViewModel {
    /// One row of the list, ready to show.
    public struct Row: Identifiable, Equatable, Sendable {
        /// The conversation.
        public var id: ConversationID
        /// The other person's display name.
        public var title: String
        /// Initials for the avatar.
        public var initials: String
        /// The last message, "You: " first when I sent it; empty before any message.
        public var preview: String
        /// The smart timestamp of the last activity ("9:41 AM", "Yesterday", "Monday", a date).
        public var timestamp: String
        /// Messages from the other person not yet read.
        public var unreadCount: Int64
        /// Whether the other person is connected (only once both have written).
        public var isOnline: Bool
        /// The other person, to open the chat with.
        public var otherUserId: UserID?

        /// A row, e.g. for SwiftUI previews and tests.
        public init(
            id: ConversationID, title: String, initials: String, preview: String = "", timestamp: String = "", unreadCount: Int64 = 0,
            isOnline: Bool = false, otherUserId: UserID? = nil
        ) {
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
    @ObservationIgnored let formatter: SmartDateFormatter
    @ObservationIgnored let now: () -> Date

    /// A list over `client`'s conversations; `formatter` and `now` make times testable.
    public init(client: ParleyClient, formatter: SmartDateFormatter = SmartDateFormatter(), now: @escaping () -> Date = Date.init) {
        self.client = client
        self.formatter = formatter
        self.now = now
    }

    /// What the screen shows.
    public var state: State {
        switch client.listState {
        case .loading: rows.isEmpty ? .loading : .loaded
        case .failed(let message): rows.isEmpty ? .error(message) : .loaded
        case .loaded: rows.isEmpty ? .empty : .loaded
        }
    }

    /// The rows, most recent activity first.
    public var rows: [Row] {
        let now = now()
        return client.sortedConversations().map { summary in
            let other = client.otherMember(of: summary)
            let title = other?.displayName ?? "Unknown"
            var preview = ""
            if let last = summary.lastMessage {
                let firstLine = last.text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
                preview = (last.senderId == client.me.id ? "You: " : "") + firstLine
            }
            return Row(
                id: summary.id, title: title, initials: title.initials, preview: preview,
                timestamp: formatter.listTimestamp(summary.lastActivityAt.date, now: now), unreadCount: client.unreadCount(summary.id),
                isOnline: other.flatMap { client.presence[$0.userId]?.online } ?? false, otherUserId: other?.userId)
        }
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
