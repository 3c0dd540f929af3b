import ParleyCore

/// The idempotency keys of group actions (create, add, remove, role, leave, rename, accept) that have
/// no sure answer yet.
///
/// Rules:
/// 1. An action gets a fresh `clientId` the first time it is tried, kept under a key naming what it
///    does ("rename grp_… to Trip"), and persisted before the request goes out.
/// 2. A try without a sure answer (no answer, a 5xx, `rate_limited`, `storage_unavailable`) keeps
///    it: the same action tried again, now, later or after a restart, reuses it, so the server
///    applies it once and answers the original entry (`duplicate: true`).
/// 3. A sure answer, success or refusal, forgets it: doing the same thing again later is a new action.
struct GroupActionLedger: Codable, Equatable, Sendable {
    private(set) var keys: [String: ClientMessageID] = [:]

    /// Rule 1.
    mutating func clientId(for action: String) -> ClientMessageID {
        if let known = keys[action] { return known }
        let fresh = ClientMessageID.random()
        keys[action] = fresh
        return fresh
    }

    /// Rule 3.
    mutating func answered(_ action: String) {
        keys[action] = nil
    }

    /// The key of an action: its kind and its arguments, sets sorted.
    static func key(_ kind: String, _ parts: [String], set: [String] = []) -> String {
        ([kind] + parts + set.sorted()).joined(separator: "\u{1F}")
    }
}
