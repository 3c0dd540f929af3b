/// Bounds-checked reads from untrusted header bytes. Every read answers nil rather than trap when
/// it would reach outside the array (a negative offset included), so a parser built on them can
/// follow whatever offsets a file claims without checking each one first.
///
/// Offsets are compared as `count - offset`, never `offset + width`: with `offset >= 0` the former
/// cannot overflow, while the latter can when the offset came from the file.
extension [UInt8] {
    /// The byte at `offset`, or nil when there is none.
    func byte(at offset: Int) -> UInt8? {
        guard offset >= 0, offset < count else { return nil }
        return self[offset]
    }

    /// The big-endian 16-bit integer at `offset`.
    func uint16BE(at offset: Int) -> Int? {
        guard offset >= 0, count - offset >= 2 else { return nil }
        return Int(self[offset]) << 8 | Int(self[offset + 1])
    }

    /// The little-endian 16-bit integer at `offset`.
    func uint16LE(at offset: Int) -> Int? {
        guard offset >= 0, count - offset >= 2 else { return nil }
        return Int(self[offset]) | Int(self[offset + 1]) << 8
    }

    /// The little-endian 24-bit integer at `offset` (WebP's canvas sizes).
    func uint24LE(at offset: Int) -> Int? {
        guard offset >= 0, count - offset >= 3 else { return nil }
        return Int(self[offset]) | Int(self[offset + 1]) << 8 | Int(self[offset + 2]) << 16
    }

    /// The big-endian 32-bit integer at `offset`. A `UInt32`, not an `Int`: callers convert it with
    /// `Int(exactly:)`, which stays safe where `Int` is 32 bits wide.
    func uint32BE(at offset: Int) -> UInt32? {
        guard offset >= 0, count - offset >= 4 else { return nil }
        return UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3])
    }

    /// The little-endian 32-bit integer at `offset`.
    func uint32LE(at offset: Int) -> UInt32? {
        guard offset >= 0, count - offset >= 4 else { return nil }
        return UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16 | UInt32(self[offset + 3]) << 24
    }

    /// The big-endian 64-bit integer at `offset` (ISO BMFF's large box sizes).
    func uint64BE(at offset: Int) -> UInt64? {
        guard offset >= 0, count - offset >= 8, let high = uint32BE(at: offset), let low = uint32BE(at: offset + 4) else { return nil }
        return UInt64(high) << 32 | UInt64(low)
    }

    /// Whether `pattern` appears at `offset` (false when the bytes run out first).
    func matches(_ pattern: [UInt8], at offset: Int = 0) -> Bool {
        guard offset >= 0, count - offset >= pattern.count else { return false }
        return self[offset..<offset + pattern.count].elementsEqual(pattern)
    }

    /// Whether the ASCII `text` appears at `offset`: magic numbers read as their letters.
    func matches(_ text: String, at offset: Int = 0) -> Bool {
        matches(Array(text.utf8), at: offset)
    }
}
