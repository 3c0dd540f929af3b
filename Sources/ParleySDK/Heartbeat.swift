import Foundation
import ParleyCore
import Synchronization

/// How the client notices a dead connection: a phone that changed networks, a NAT that forgot the
/// mapping, a laptop waking from sleep. The TCP socket stays "open" for minutes to hours in those
/// cases, so the client watches the line itself. Rules:
///
/// 1. After ``idleInterval`` without any frame from the server, the client sends `ping`.
/// 2. Every frame that expects an answer (`hello`, `ping`, `send`) starts a wait if none is running;
///    any frame from the server ends it, counted when it came off the socket: a client busy with a
///    backlog of frames is not taken for a dead line while answers wait for it.
/// 3. A wait longer than ``timeout`` means the line is dead: the connection is dropped at once (no
///    close handshake, which could not get through either), the client shows offline, and it
///    reconnects with backoff and resumes. Messages in flight stay in the outbox and are sent again
///    with the same clientId.
/// 4. Opening a connection (TCP, WebSocket upgrade) that takes longer than ``timeout`` counts as dead too.
///
/// The server applies the mirror rule: a connection that sends nothing for 90 s is closed, so a
/// client pinging every ``idleInterval`` (default 20 s) is never taken for dead.
public struct Heartbeat: Sendable, Equatable {
    /// Silence from the server after which the client pings.
    public var idleInterval: Duration
    /// How long an expected answer may take before the connection counts as dead.
    public var timeout: Duration

    /// A heartbeat that pings after `idleInterval` of silence and gives up on a line after `timeout` more.
    public init(idleInterval: Duration = .seconds(20), timeout: Duration = .seconds(10)) {
        self.idleInterval = idleInterval
        self.timeout = timeout
    }

    /// 20 s idle, 10 s to answer: well within the server's 90 s idle limit.
    public static let standard = Heartbeat()

    /// How often the watchdog looks (a quarter of the shorter interval, at most a second).
    var tick: Duration { min(.seconds(1), min(idleInterval, timeout) / 4) }
}

/// The state behind rules 1–3, for one connection.
struct LineWatch {
    private(set) var lastFrame: ContinuousClock.Instant
    private(set) var waitingSince: ContinuousClock.Instant?

    init(now: ContinuousClock.Instant) {
        lastFrame = now
    }

    mutating func received(at now: ContinuousClock.Instant) {
        lastFrame = now
        waitingSince = nil
    }

    /// A frame came off the socket at `instant`, not yet handled (rule 2): it answers a wait that
    /// began before it, and counts as heard.
    mutating func arrived(at instant: ContinuousClock.Instant) {
        if instant > lastFrame { lastFrame = instant }
        if let waitingSince, instant >= waitingSince { self.waitingSince = nil }
    }

    mutating func expectAnswer(at now: ContinuousClock.Instant) {
        if waitingSince == nil { waitingSince = now }
    }

    enum Verdict: Equatable { case fine, ping, dead }

    func verdict(at now: ContinuousClock.Instant, _ heartbeat: Heartbeat) -> Verdict {
        if let waitingSince { return now - waitingSince >= heartbeat.timeout ? .dead : .fine }
        return now - lastFrame >= heartbeat.idleInterval ? .ping : .fine
    }
}

/// Runs `operation`, or gives up after `timeout` and cancels it. A result that comes after the
/// deadline is handed to `discard` (a late connection must still be closed).
func withDeadline<T: Sendable>(
    _ timeout: Duration, discard: @escaping @Sendable (T) -> Void = { _ in },
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = ResumeOnce<T>()
    return try await withCheckedThrowingContinuation { continuation in
        outcome.set(continuation)
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            if let waiting = outcome.take() {
                waiting.resume(with: result)
            } else if case .success(let late) = result {
                discard(late)
            }
        }
        Task {
            try? await Task.sleep(for: timeout)
            guard let waiting = outcome.take() else { return }
            work.cancel()
            waiting.resume(throwing: ParleyClientError(status: 0, code: nil, message: "The server did not answer in time."))
        }
    }
}

/// A continuation that only the first taker may resume.
private final class ResumeOnce<T: Sendable>: Sendable {
    private let slot = Mutex<CheckedContinuation<T, any Error>?>(nil)
    func set(_ continuation: CheckedContinuation<T, any Error>) { slot.withLock { $0 = continuation } }
    func take() -> CheckedContinuation<T, any Error>? {
        slot.withLock { state in
            defer { state = nil }; return state
        }
    }
}
