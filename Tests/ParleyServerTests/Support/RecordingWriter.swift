@testable import ParleyServer
import Synchronization

/// An ``OutboundWriter`` for unit tests: logs the runs the connection starts (`run`) and the live
/// events it writes (`event N`); writes live events when `writesLive` says so, after `onLive`.
final class RecordingWriter: OutboundWriter {
    private let entries = Mutex<[String]>([])
    private let writesLive: Bool
    private let onLive: @Sendable () -> Void

    init(writesLive: Bool = true, onLive: @escaping @Sendable () -> Void = {}) {
        self.writesLive = writesLive
        self.onLive = onLive
    }

    var log: [String] { entries.withLock { $0 } }
    var runs: Int { log.filter { $0 == "run" }.count }
    var written: [Int64] { log.compactMap { $0.hasPrefix("event ") ? Int64($0.dropFirst(6)) : nil } }

    func startRun() { entries.withLock { $0.append("run") } }

    func writeLive(_ event: EncodedEvent) -> Bool {
        onLive()
        guard writesLive else { return false }
        entries.withLock { $0.append("event \(event.position)") }
        return true
    }
}
