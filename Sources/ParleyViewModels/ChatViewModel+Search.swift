import Foundation
import ParleySDK
import ParleyCore

/// Opening a chat at one message (a search result, a quote's original).
///
/// The history loads from the newest page back to the message, so the timeline stays one
/// unbroken run and scrolling works both ways from there; ``highlightedSeq`` says which message to
/// scroll to and mark, and ``highlightedItemID`` which row of ``items`` that is.
extension ChatViewModel {
    /// Loads the chat, then older pages until the message of `seq` is held, and marks it. Returns
    /// it, or `nil` when it is not there (deleted for me, or no longer in my history); the newest
    /// page shows either way.
    @discardableResult
    public func load(around seq: Int64) async -> TimelineItem? {
        await load()
        let found = await loadOlder(until: seq)
        highlightedSeq = found == nil ? nil : seq
        return found
    }

    /// The id of the row of ``items`` that shows ``highlightedSeq`` (for a scroll view to go to).
    public var highlightedItemID: String? {
        guard let seq = highlightedSeq else { return nil }
        return client.timeline(conversation).first { $0.seq == seq }?.id.rawValue
    }

    /// Takes the mark away (the user scrolled on, or after a moment).
    public func clearHighlight() {
        highlightedSeq = nil
    }

    /// The message of `seq`, loading older pages until it is held; `nil` when the history ends first.
    func loadOlder(until seq: Int64) async -> TimelineItem? {
        guard seq > 0 else { return nil }
        while true {
            if let held = client.timeline(conversation).first(where: { $0.seq == seq }) { return held }
            let oldest = client.timeline(conversation).compactMap(\.seq).min() ?? .max
            guard oldest > seq, hasOlder, let loaded = try? await client.loadOlder(conversation), loaded > 0 else { return nil }
            if isGroup { await client.resolveNames(in: conversation) }
        }
    }
}
