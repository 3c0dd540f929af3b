import ParleyCore

/// Who is typing where, until when. Pure state: the hub owns the clock and the fan-out.
///
/// Rules: a typing signal lasts `timeout` unless renewed; stopping, sending a message or the user's
/// last connection closing ends it at once; every start and end is reported once.
struct TypingTracker {
    struct Key: Hashable {
        var conversation: ConversationID
        var user: UserID
    }
    struct Entry {
        var expires: ContinuousClock.Instant
        /// The other members, who are told when typing ends.
        var audience: [UserID]
    }

    private(set) var entries: [Key: Entry] = [:]

    /// Records a start or renewal; returns true when this is a start (others need telling).
    mutating func start(_ key: Key, audience: [UserID], until expires: ContinuousClock.Instant) -> Bool {
        let isNew = entries[key] == nil
        entries[key] = Entry(expires: expires, audience: audience)
        return isNew
    }

    /// Ends one signal; returns its audience if it was active.
    mutating func stop(_ key: Key) -> [UserID]? {
        entries.removeValue(forKey: key)?.audience
    }

    /// Ends every signal of a user (disconnect).
    mutating func stopAll(of user: UserID) -> [(Key, [UserID])] {
        let ended = entries.filter { $0.key.user == user }
        for key in ended.keys { entries.removeValue(forKey: key) }
        return ended.map { ($0.key, $0.value.audience) }
    }

    /// Ends signals that expired by `now`.
    mutating func expire(now: ContinuousClock.Instant) -> [(Key, [UserID])] {
        let ended = entries.filter { $0.value.expires <= now }
        for key in ended.keys { entries.removeValue(forKey: key) }
        return ended.map { ($0.key, $0.value.audience) }
    }
}
