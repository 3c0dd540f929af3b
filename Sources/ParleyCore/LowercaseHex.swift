/// Bytes as lowercase hex, written straight into the string (ids, token hashes and JSON escapes
/// are made on hot paths; `String(format: "%02x")` per byte cost 5 % of a connect).
public enum LowercaseHex {
    /// The sixteen digits, as UTF-8.
    public static let digits = Array("0123456789abcdef".utf8)

    /// Two digits per byte; a `-` before each byte whose index is in `dashesBefore` (the UUID form).
    /// Inlinable, so callers in other modules get it specialized for their collection (generic, it
    /// looked up type metadata for every byte).
    @inlinable
    public static func string(_ bytes: some Collection<UInt8>, dashesBefore: [Int] = []) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2 + dashesBefore.count) { buffer in
            var index = 0
            for (position, byte) in bytes.enumerated() {
                if dashesBefore.contains(position) {
                    buffer[index] = UInt8(ascii: "-")
                    index += 1
                }
                buffer[index] = digits[Int(byte >> 4)]
                buffer[index + 1] = digits[Int(byte & 0x0F)]
                index += 2
            }
            return index
        }
    }
}
