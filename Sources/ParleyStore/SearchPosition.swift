import ParleyCore

/// Where a newest-first page of search results ended: its last hit. The next page is what is older
/// than it, so messages deleted or sent between pages neither skip a result nor repeat one (an
/// offset does both). Written into the `cursor` as `n<createdAt>.<seq>.<conversation id>`
/// (docs/protocol.md "Search"); a store finds its own place from it (SQLite: that message's
/// storage order, if the caller may read it; PostgreSQL: the key it orders by).
public struct SearchPosition: Sendable, Hashable {
    /// The hit's time, milliseconds.
    public var createdAt: Int64
    /// Its seq in its conversation.
    public var seq: Int64
    /// Its conversation.
    public var conversation: ConversationID

    /// The position of `hit`.
    public init(_ hit: SearchHit) {
        createdAt = hit.createdAt.milliseconds
        seq = hit.seq
        conversation = hit.conversationId
    }

    /// As a `cursor`.
    public var cursor: String { "n\(createdAt).\(seq).\(conversation.rawValue)" }

    /// Reads a `cursor` of this shape (openapi.yaml's pattern), else nil. Any such cursor is taken:
    /// one that names no message of the caller's still pages, by time.
    public init?(cursor: String) {
        guard cursor.first == "n" else { return nil }
        let parts = cursor.dropFirst().split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count <= 15, parts[1].count <= 15, (1...80).contains(parts[2].count),
            parts[0].allSatisfy(\.isASCIIDigit), parts[1].allSatisfy(\.isASCIIDigit),
            parts[2].allSatisfy({ $0.isASCIIDigit || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || $0 == "_" || $0 == "-" }),
            let createdAt = Int64(parts[0]), let seq = Int64(parts[1])
        else { return nil }
        self.createdAt = createdAt
        self.seq = seq
        conversation = ConversationID(rawValue: String(parts[2]))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
