import Foundation
import Synchronization

/// Loopback ports for servers that restart on the same port (the crash check, tests).
///
/// A port the kernel picks for `bind(0)` comes from the ephemeral range, which outgoing
/// connections use too: while such a server is down, a client's `connect` may take its port as
/// its own source port, and the restart then fails with "address in use". These ports come from
/// below the ephemeral range, where the kernel never picks source ports, and no port is handed out
/// twice by one process.
public enum LoopbackPort {
    private static let handedOut = Mutex<Set<Int>>([])

    /// A port on 127.0.0.1 that is free now, below the ephemeral range, not handed out before.
    public static func reservable() throws -> Int {
        let upper = min(32_768, ephemeralRangeStart())
        let lower = max(10_000, upper - 12_000)
        for _ in 0..<200 {
            let candidate = Int.random(in: lower..<upper)
            let fresh = handedOut.withLock { $0.insert(candidate).inserted }
            if fresh, isFree(candidate) { return candidate }
        }
        throw BenchAPI.Failure(description: "no free loopback port below \(upper)")
    }

    /// The first port of the kernel's ephemeral range (Linux; 32768 when it cannot be read).
    static func ephemeralRangeStart() -> Int {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        return text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32_768
    }

    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = LoopbackSocketAddress(port: port)
        return address.bind(fd)
    }
}
