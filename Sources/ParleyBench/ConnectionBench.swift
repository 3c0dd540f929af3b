import Foundation
import ParleyCore

/// Many idle, authenticated WebSockets: what each costs the server in memory.
public struct ConnectionBench: Sendable {
    public struct Options: Codable, Sendable {
        public var connections = 10_000
        /// Connections share this many users (several devices per user).
        public var users = 100
        public var holdSeconds: Double = 5
        public var concurrency = 128
        public init() {}
    }

    public struct Report: Codable, Sendable {
        public var options: Options
        public var opened = 0, failed = 0
        public var connectSeconds = 0.0
        public var serverRSSBeforeKiB: Int?, serverRSSOpenKiB: Int?, serverRSSClosedKiB: Int?
        public var bytesPerConnection: Int?
        /// The server's CPU time (user + system) per connection opened and authenticated (`hello`
        /// answered and synced): a figure that holds still where connects per second swing.
        public var serverCPUMicrosPerConnect: Double?
    }

    let target: BenchTarget
    var api: BenchAPI { target.api }
    var webSocketURL: String { target.webSocketURL }
    var serverPID: Int32? { target.serverPID }

    public init(_ target: BenchTarget) { self.target = target }

    public func run(_ options: Options, log: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        var report = Report(options: options)
        let prefix = "c" + String(UInt32.random(in: 0...UInt32.max), radix: 36) + "_"
        let users = try await api.registerMany(prefix: prefix, count: max(1, min(options.users, options.connections)))
        report.serverRSSBeforeKiB = serverPID.flatMap(ProcessMemory.residentKiB)
        log("opening \(options.connections) connections")
        let cpuBefore = serverPID.flatMap(ProcessCPU.microseconds)
        let start = ContinuousClock.now
        var sockets: [BenchSocket] = []
        sockets.reserveCapacity(options.connections)
        try await withThrowingTaskGroup(of: BenchSocket?.self) { group in
            var next = 0
            func addNext() {
                let token = users[next % users.count].token
                next += 1
                group.addTask { try? await BenchSocket.connect(url: webSocketURL, token: token) { _ in } }
            }
            for _ in 0..<min(options.concurrency, options.connections) { addNext() }
            while let socket = try await group.next() {
                if let socket { sockets.append(socket) } else { report.failed += 1 }
                if next < options.connections { addNext() }
                if sockets.count % 5000 == 0, sockets.count > 0 { log("  \(sockets.count) open") }
            }
        }
        report.opened = sockets.count
        report.connectSeconds = (ContinuousClock.now - start).seconds
        if let before = cpuBefore, let after = serverPID.flatMap(ProcessCPU.microseconds), report.opened > 0 {
            report.serverCPUMicrosPerConnect = Double(after - before) / Double(report.opened)
        }
        try await Task.sleep(for: .seconds(options.holdSeconds))
        report.serverRSSOpenKiB = serverPID.flatMap(ProcessMemory.residentKiB)
        if let before = report.serverRSSBeforeKiB, let open = report.serverRSSOpenKiB, report.opened > 0 {
            report.bytesPerConnection = (open - before) * 1024 / report.opened
        }
        log("closing")
        for socket in sockets { socket.close() }
        for socket in sockets { await socket.closed() }
        try await Task.sleep(for: .seconds(1))
        report.serverRSSClosedKiB = serverPID.flatMap(ProcessMemory.residentKiB)
        return report
    }
}
