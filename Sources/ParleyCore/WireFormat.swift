import Foundation

/// The JSON settings of every Parley payload, shared by server and clients: sorted keys (stable,
/// comparable output) and unescaped slashes.
public enum WireFormat {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
