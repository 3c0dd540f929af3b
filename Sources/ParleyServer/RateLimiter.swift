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
    private let now: @Sendable () -> ContinuousClock.Instant

    /// `now` is the time source (``ServerConfiguration/rateLimitClock``; tests stop it).
    init(ratePerSecond: Double, burst: Double, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.ratePerSecond = ratePerSecond
        self.burst = max(1, burst)
        self.now = now
    }

    /// Takes one token for `key`; returns `nil` when allowed, or the whole seconds to wait.
    func acquire(_ key: String) -> Int? {
        take(key, spend: true)
    }

    /// Whether `key` has a token left, without taking it: `nil`, or the whole seconds to wait.
    func peek(_ key: String) -> Int? {
        take(key, spend: false)
    }

    private func take(_ key: String, spend: Bool) -> Int? {
        let now = now()
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + Self.seconds(now - bucket.updated) * ratePerSecond)
            bucket.updated = now
            if bucket.tokens >= 1 {
                if spend {
                    bucket.tokens -= 1
                    buckets[key] = bucket
                }
                return nil
            }
            buckets[key] = bucket
            return max(1, Int(((1 - bucket.tokens) / ratePerSecond).rounded(.up)))
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Drops buckets that have refilled completely (called periodically).
    func sweep() {
        let now = now()
        buckets.withLock { buckets in
            buckets = buckets.filter { _, bucket in
                bucket.tokens + Self.seconds(now - bucket.updated) * ratePerSecond < burst
            }
        }
    }
}
