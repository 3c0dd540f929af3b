/// One message found by `GET /v1/search` (docs/protocol.md "Search").
public struct SearchHit: Hashable, Codable, Sendable {
    /// Where it is.
    public var conversationId: ConversationID
    /// Its seq there.
    public var seq: Int64
    /// The message found, as actions and events point at it.
    public var ref: MessageRef { MessageRef(conversationId: conversationId, seq: seq) }
    /// Who wrote it.
    public var senderId: UserID
    /// When.
    public var createdAt: Timestamp
    /// Its current text.
    public var text: String
    /// The parts of `text` that matched, in order, as UTF-16 offsets (what JavaScript strings and
    /// `NSRange` count); never markup.
    public var matches: [TextRange]

    /// Creates a value.
    public init(conversationId: ConversationID, seq: Int64, senderId: UserID, createdAt: Timestamp, text: String, matches: [TextRange]) {
        self.conversationId = conversationId
        self.seq = seq
        self.senderId = senderId
        self.createdAt = createdAt
        self.text = text
        self.matches = matches
    }
}

/// A range of a text in UTF-16 code units.
public struct TextRange: Hashable, Codable, Sendable {
    /// Offset of the first code unit.
    public var start: Int
    /// Number of code units.
    public var length: Int

    /// Creates a value.
    public init(start: Int, length: Int) {
        self.start = start
        self.length = length
    }
}

/// How search results are ordered.
public enum SearchOrder: String, Codable, Sendable, CaseIterable {
    /// Newest first (the default).
    case newest
    /// Best match first.
    case relevance
}

extension API {
    /// `GET /v1/search`: a page of results and the cursor of the next one.
    public struct SearchResults: Codable, Sendable, Equatable {
        /// The hits, in the order asked for.
        public var results: [SearchHit]
        /// Pass as `cursor` for the next page; absent on the last one.
        public var nextCursor: String?
        /// Creates the response body.
        public init(results: [SearchHit], nextCursor: String?) {
            self.results = results
            self.nextCursor = nextCursor
        }
    }
}
