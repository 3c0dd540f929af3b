import Foundation
import Synchronization

/// Which of a user's push targets (a Web Push endpoint, an APNs device) said "try again" lately,
/// so that one failing target neither holds back nor repeats the pushes of the others.
///
/// Rules:
/// 1. A target that answers "try again" (429, 5xx, a timeout, no connection) rests: it is not
///    sent to for 2 s, doubling with each such answer in a row up to 5 minutes, or for the
///    service's `Retry-After` when that is longer (at most an hour). An answer that delivers ends
///    its rest and its count.
/// 2. While it rests, the user's other targets are pushed to as usual; the resting one misses
///    what is sent meanwhile, as a device away from the network would (its client syncs when
///    opened). Only when no target took a push is the user's push retried (``PushDispatcher``
///    rule 3), after the earliest rest ends.
/// 3. Kept in memory, per node: a node that restarts, or another node of a cluster, tries the
///    target again at once. At most ``limit`` targets are remembered; a full table forgets the
///    one whose rest ends first.
final class PushTargetBackoff: Sendable {
    struct Rest: Sendable {
        var failures: Int
        var until: ContinuousClock.Instant
    }

    static let limit = 100_000
    private let resting = Mutex<[String: Rest]>([:])

    /// How long `target` still rests, or nil when it may be sent to.
    func remaining(_ target: String, now: ContinuousClock.Instant = .now) -> Duration? {
        resting.withLock { table in
            guard let rest = table[target], rest.until > now else { return nil }
            return rest.until - now
        }
    }

    /// Rule 1: `target` said "try again" (after `retryAfter`, when it said); answers its rest.
    @discardableResult
    func failed(_ target: String, retryAfter: Duration?, now: ContinuousClock.Instant = .now) -> Duration {
        resting.withLock { table in
            let failures = (table[target]?.failures ?? 0) + 1
            let backoff = Duration.seconds(min(300, 2 << min(failures - 1, 9)))
            let rest = max(backoff, min(retryAfter ?? .zero, .seconds(3_600)))
            if table[target] == nil, table.count >= Self.limit,
                let first = table.min(by: { $0.value.until < $1.value.until })?.key
            {
                table[first] = nil
            }
            table[target] = Rest(failures: failures, until: now + rest)
            return rest
        }
    }

    /// Rule 1: `target` delivered.
    func delivered(_ target: String) {
        resting.withLock { table in _ = table.removeValue(forKey: target) }
    }
}
