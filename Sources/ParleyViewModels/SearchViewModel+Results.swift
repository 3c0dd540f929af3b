import Foundation
import ParleySDK
import ParleyCore

/// What the search screen shows: results grouped by conversation (rule 4 of `SearchViewModel.swift`).
extension SearchViewModel {
    /// One result, ready to show.
    public struct Result: Identifiable, Equatable, Sendable {
        /// The message found.
        public var hit: SearchHit
        /// Who wrote it: "You", or their display name.
        public var sender: String
        /// When: "9:41 AM", "Yesterday", a date.
        public var timestamp: String
        /// Its text in runs, the matched ones to highlight (as text, never markup).
        public var segments: [SearchHit.Segment]
        /// The part of a long text around its first match, in runs (``SearchHit/snippet(length:lead:)``).
        public var snippet: [SearchHit.Segment] { hit.snippet() }
        /// A stable id: the conversation and the seq.
        public var id: MessageRef { hit.ref }
    }

    /// The results of one conversation.
    public struct Group: Identifiable, Equatable, Sendable {
        /// The conversation.
        public var id: ConversationID
        /// The group's title or the other person's name.
        public var title: String
        /// Whether it is a group.
        public var isGroup: Bool
        /// Its results, in the order of the search.
        public var results: [Result]
    }

    /// Rule 4.
    public var groups: [Group] {
        var groups: [Group] = []
        var index: [ConversationID: Int] = [:]
        let now = now()
        for hit in hits {
            let mine = hit.senderId == client.me.id
            let result = Result(
                hit: hit, sender: mine ? "You" : (client.distinguishableName(of: hit.senderId, in: hit.conversationId) ?? GroupText.someone),
                timestamp: formatter.listTimestamp(hit.createdAt.date, now: now), segments: hit.segments)
            if let at = index[hit.conversationId] {
                groups[at].results.append(result)
            } else {
                index[hit.conversationId] = groups.count
                let title = client.title(of: hit.conversationId) ?? (hit.conversationId.isGroup ? GroupText.group : GroupText.unknownPerson)
                groups.append(Group(id: hit.conversationId, title: title, isGroup: hit.conversationId.isGroup, results: [result]))
            }
        }
        return groups
    }
}
