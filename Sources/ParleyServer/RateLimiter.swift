import Foundation
import Synchronization

/// Token buckets by key: each key may spend `burst` at once and regains `ratePerSecond`.
///
/// Idle keys are forgotten once their bucket is full again, so memory follows the active keys.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let ratePerSecond: Double
    private let burst: Double
    private let buckets = Mutex<[String: Bucket]>([:])
    private let clock = ContinuousClock()

    init(ratePerSecond: Double, burst: Double) {
        self.ratePerSecond = ratePerSecond
        self.burst = max(1, burst)
    }

    /// Takes one token for `key`; returns `nil` when allowed, or the whole seconds to wait.
    func acquire(_ key: String) -> Int? {
        let now = clock.now
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            let elapsed = Double((now - bucket.updated).components.attoseconds) / 1e18 + Double((now - bucket.updated).components.seconds)
            bucket.tokens = min(burst, bucket.tokens + elapsed * ratePerSecond)
            bucket.updated = now
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                buckets[key] = bucket
                return nil
            }
            buckets[key] = bucket
            return max(1, Int(((1 - bucket.tokens) / ratePerSecond).rounded(.up)))
        }
    }

    /// Drops buckets that have refilled completely (called periodically).
    func sweep() {
        let now = clock.now
        buckets.withLock { buckets in
            buckets = buckets.filter { _, bucket in
                let elapsed = Double((now - bucket.updated).components.seconds)
                return bucket.tokens + elapsed * ratePerSecond < burst
            }
        }
    }
}
