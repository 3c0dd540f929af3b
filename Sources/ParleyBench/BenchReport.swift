import Foundation
import Histogram

/// Percentiles of a latency histogram, in microseconds.
public struct Percentiles: Codable, Sendable {
    public var count: UInt64
    public var p50: UInt64
    public var p90: UInt64
    public var p99: UInt64
    public var p999: UInt64
    public var max: UInt64

    public init(_ histogram: Histogram<UInt64>) {
        count = histogram.totalCount
        p50 = histogram.valueAtPercentile(50)
        p90 = histogram.valueAtPercentile(90)
        p99 = histogram.valueAtPercentile(99)
        p999 = histogram.valueAtPercentile(99.9)
        max = histogram.max
    }

    /// `p50 0.41 ms · p90 … · max …`
    public var summary: String {
        func ms(_ micros: UInt64) -> String { String(format: "%.2f", Double(micros) / 1000) }
        return "p50 \(ms(p50)) · p90 \(ms(p90)) · p99 \(ms(p99)) · p99.9 \(ms(p999)) · max \(ms(max)) ms (n=\(count))"
    }
}

extension Histogram where Count == UInt64 {
    /// The longest duration the bench's histograms hold apart, in µs (2 minutes).
    static var longestMicroseconds: UInt64 { 120_000_000 }

    /// The bench's histograms: durations in µs, up to ``longestMicroseconds``, to three significant digits.
    public static func microseconds() -> Self { Self(highestTrackableValue: longestMicroseconds, numberOfSignificantValueDigits: .three) }

    /// Records `micros`, a longer one as ``longestMicroseconds``: every sample counts (a dropped one would not).
    public mutating func record(clamping micros: UInt64) { _ = record(Swift.min(micros, Self.longestMicroseconds)) }
}

/// Resident memory of a process from /proc (Linux), in KiB; nil where unavailable.
public enum ProcessMemory {
    public static func residentKiB(pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "")
        }
        return nil
    }
}

/// CPU time a process has used (user + system) from /proc (Linux), in microseconds; nil elsewhere.
/// Unlike rates, CPU per message holds still when the shared machine is busy.
public enum ProcessCPU {
    public static func microseconds(pid: Int32) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ")?.upperBound
        else { return nil }
        // Fields after the command name: state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[afterName...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        let ticks = Int(sysconf(Int32(_SC_CLK_TCK)))
        return (user + system) * 1_000_000 / max(1, ticks)
    }
}

/// Prints a report as a human summary and, last, one JSON line for scripts.
public enum ReportPrinter {
    public static func print<Report: Encodable>(_ lines: [String], _ report: Report) {
        for line in lines { Swift.print(line) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let data = try? encoder.encode(report) { Swift.print(String(decoding: data, as: UTF8.self)) }
    }
}

/// Bytes a process has caused to be written to storage (`write_bytes` in /proc/<pid>/io, counted as
/// it dirties the page cache: a run's WAL appends and checkpoints, not its sockets); nil where unavailable.
public enum ProcessIO {
    public static func writtenBytes(pid: Int32) -> Int? {
        guard let io = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return nil }
        for line in io.split(separator: "\n") where line.hasPrefix("write_bytes:") {
            return Int(line.split(separator: " ").last ?? "")
        }
        return nil
    }
}
