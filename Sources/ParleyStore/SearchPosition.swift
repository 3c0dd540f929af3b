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
        // Byte by byte: nothing but ASCII gets through (no combining mark riding on a digit).
        let bytes = Array(cursor.utf8)
        guard bytes.first == UInt8(ascii: "n") else { return nil }
        let parts = bytes.dropFirst().split(separator: UInt8(ascii: "."), maxSplits: 2, omittingEmptySubsequences: false)
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let isIDByte = { (byte: UInt8) in
            isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard parts.count == 3, (1...15).contains(parts[0].count), (1...15).contains(parts[1].count), (1...80).contains(parts[2].count),
            parts[0].allSatisfy(isDigit), parts[1].allSatisfy(isDigit), parts[2].allSatisfy(isIDByte),
            let createdAt = Int64(String(decoding: parts[0], as: UTF8.self)), let seq = Int64(String(decoding: parts[1], as: UTF8.self))
        else { return nil }
        self.createdAt = createdAt
        self.seq = seq
        conversation = ConversationID(rawValue: String(decoding: parts[2], as: UTF8.self))
    }
}
