import Foundation
import Logging

/// Writes one JSON object per log line to standard error: `ts`, `level`, `label`, `msg` and the metadata.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: String] = [
            "ts": Date().formatted(.iso8601), "level": event.level.rawValue, "label": label, "msg": "\(event.message)",
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { object[key] = "\(value)" }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        FileHandle.standardError.write(data + Data("\n".utf8))
    }
}
