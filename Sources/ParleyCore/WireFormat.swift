import Foundation

/// The JSON settings of every Parley payload, shared by server and clients: sorted keys (stable,
/// comparable output) and unescaped slashes.
public enum WireFormat {
    /// A JSON encoder with Parley's settings.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
