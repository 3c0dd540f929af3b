/// Bytes that replace a part of a file, at an offset: metadata blanked in place. The zeros in the
/// middle are counted, not kept, so a file of large blocks costs no memory to scrub.
public struct MetadataPatch: Equatable, Sendable {
    public var offset: Int64
    public var head: [UInt8]
    public var zeros: Int
    public var tail: [UInt8] = []

    public var length: Int { head.count + zeros + tail.count }

    /// The patch's byte at `index` (0 ..< ``length``).
    public func byte(at index: Int) -> UInt8 {
        index < head.count ? head[index] : index < head.count + zeros ? 0 : tail[index - head.count - zeros]
    }
}

/// Finds where a photo carries who took it, where and with what (EXIF, XMP, IPTC, comments, PNG
/// text), as its bytes stream by, and says what blanks each part in place, so the file keeps its
/// size and stays the same image (``ImageMetadataScrub``).
///
/// Rules:
/// 1. **JPEG**, segments up to the first scan: an EXIF APP1 becomes a minimal EXIF holding only
///    the orientation, when it is not the default (a phone's portrait photo stays upright), padded
///    with zeros; every other APP1 (XMP), APP12, APP13 (IPTC) and COM becomes a comment of zeros.
///    JFIF, ICC profiles (APP2) and Adobe's APP14 stay: they change how the pixels look.
/// 2. **PNG**: `tEXt`, `zTXt`, `iTXt`, `eXIf` and `tIME` chunks become a private chunk every
///    decoder skips (`scRb`), their data zeros, their CRC recomputed.
/// 3. **WebP**: `EXIF` and `XMP ` chunks become `PADD` chunks of zeros, and `VP8X` no longer
///    flags them.
/// 4. A malformed structure ends the walk: what was found before it is still blanked, nothing after
///    it is guessed. A part larger than ``largestPart`` is left (no camera writes one).
struct ImageMetadataWalker {
    static let largestPart = 4 << 20

    private(set) var patches: [MetadataPatch] = []
    /// Nothing more to find (the first scan, the end chunk, or a structure it cannot follow).
    private(set) var done = false

    /// What the next read is; `webpFlags` carries where its chunk ends.
    private enum Step { case start, jpegMarker, jpegExif, pngChunk, webpChunk, webpFlags(next: Int64) }
    private var step = Step.start
    /// The offset of the next byte fed, of the current read's first byte, and where a skip ends.
    private var position: Int64 = 0, readAt: Int64 = 0, skipTo: Int64 = 0
    private var want = 12
    private var collected: [UInt8] = []

    mutating func feed<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        var index = bytes.startIndex
        while index < bytes.endIndex, !done {
            let available = Int64(bytes.distance(from: index, to: bytes.endIndex))
            if position < skipTo {
                let count = min(available, skipTo - position)
                index = bytes.index(index, offsetBy: Int(count))
                position += count
                continue
            }
            let count = min(want - collected.count, Int(available))
            let end = bytes.index(index, offsetBy: count)
            if collected.isEmpty { readAt = position }
            collected += bytes[index..<end]
            index = end
            position += Int64(count)
            if collected.count == want {
                let read = collected
                collected = []
                handle(read)
            }
        }
    }

    /// Reads `count` bytes at `offset` next (skipping to it).
    private mutating func read(_ count: Int, at offset: Int64, _ next: Step) {
        skipTo = offset
        want = count
        step = next
    }

    private mutating func handle(_ bytes: [UInt8]) {
        switch step {
        case .start:
            if bytes.matches([0xFF, 0xD8, 0xFF]) {
                read(4, at: 2, .jpegMarker)
            } else if bytes.matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
                read(8, at: 8, .pngChunk)
            } else if bytes.matches("RIFF"), bytes.matches("WEBP", at: 8) {
                read(8, at: 12, .webpChunk)
            } else {
                done = true
            }
            // The first read went past where the format's walk starts: feed those bytes again.
            if !done, skipTo < position {
                let again = Array(bytes[Int(skipTo)...])
                position = skipTo
                feed(again)
            }
        case .jpegMarker: jpegSegment(bytes)
        case .jpegExif:
            let orientation = bytes.matches(Array("Exif\0\0".utf8)) ? EXIF.orientation(bytes, tiff: 6..<bytes.count) ?? 1 : 1
            if (2...8).contains(orientation), bytes.count >= Self.minimalExif(orientation).count {
                patches.append(MetadataPatch(offset: readAt, head: Self.minimalExif(orientation), zeros: bytes.count - Self.minimalExif(orientation).count))
            } else {
                patches.append(Self.comment(at: readAt - 4, length: bytes.count))
            }
            read(4, at: position, .jpegMarker)
        case .pngChunk: pngChunk(bytes)
        case .webpChunk: webpChunk(bytes)
        case .webpFlags(let next):
            if bytes[0] & 0x0C != 0 { patches.append(MetadataPatch(offset: readAt, head: [bytes[0] & ~0x0C], zeros: 0)) }
            read(8, at: next, .webpChunk)
        }
    }

    private mutating func jpegSegment(_ bytes: [UInt8]) {
        // A marker after fill bytes, a stand-alone one, the scan, or a bad length: stop (rule 4).
        guard bytes[0] == 0xFF, bytes[1] != 0xFF, ![0x00, 0x01, 0xD8, 0xD9, 0xDA].contains(bytes[1]), !(0xD0...0xD7).contains(bytes[1]),
            let length = bytes.uint16BE(at: 2), length >= 2
        else { return done = true }
        let payload = readAt + 4, next = readAt + 2 + Int64(length)
        switch bytes[1] {
        case 0xE1: read(length - 2, at: payload, .jpegExif)
        case 0xEC, 0xED, 0xFE:
            patches.append(Self.comment(at: readAt, length: length - 2))
            read(4, at: next, .jpegMarker)
        default: read(4, at: next, .jpegMarker)
        }
    }

    private mutating func pngChunk(_ bytes: [UInt8]) {
        guard let length = bytes.uint32BE(at: 0).map(Int64.init) else { return done = true }
        let type = String(decoding: bytes[4..<8], as: UTF8.self)
        if type == "IEND" { return done = true }
        if ["tEXt", "zTXt", "iTXt", "eXIf", "tIME"].contains(type), length <= Self.largestPart {
            let type = Array("scRb".utf8)
            patches.append(MetadataPatch(offset: readAt + 4, head: type, zeros: Int(length), tail: CRC32.bigEndian(type, zeros: Int(length))))
        }
        read(8, at: readAt + 12 + length, .pngChunk)
    }

    private mutating func webpChunk(_ bytes: [UInt8]) {
        guard let size = bytes.uint32LE(at: 4).map(Int64.init) else { return done = true }
        let fourcc = String(decoding: bytes[0..<4], as: UTF8.self)
        let next = readAt + 8 + size + size % 2
        if fourcc == "VP8X", size >= 10 {
            read(1, at: readAt + 8, .webpFlags(next: next))
            return
        }
        if fourcc == "EXIF" || fourcc == "XMP ", size <= Self.largestPart {
            patches.append(MetadataPatch(offset: readAt, head: Array("PADD".utf8) + bytes[4..<8], zeros: Int(size)))
        }
        read(8, at: next, .webpChunk)
    }

    /// A segment turned into a comment of zeros: its marker, its length, then nothing.
    private static func comment(at offset: Int64, length: Int) -> MetadataPatch {
        MetadataPatch(offset: offset, head: [0xFF, 0xFE, UInt8((length + 2) >> 8), UInt8((length + 2) & 0xFF)], zeros: length)
    }

    /// "Exif\0\0", a big-endian TIFF header, IFD0 with Orientation alone, and no next IFD.
    static func minimalExif(_ orientation: Int) -> [UInt8] {
        Array("Exif\0\0MM".utf8) + [0x00, 0x2A, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0, 0, 0, 0, 0]
    }
}

/// PNG's CRC-32 (ISO 3309), over a chunk's type and data.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }

    /// The CRC of `bytes` followed by `zeros` zero bytes, big-endian.
    static func bigEndian(_ bytes: [UInt8], zeros: Int = 0) -> [UInt8] {
        func step(_ crc: UInt32, _ byte: UInt8) -> UInt32 { table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        var crc = bytes.reduce(UInt32.max, step)
        for _ in 0..<max(0, zeros) { crc = step(crc, 0) }
        crc = ~crc
        return [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
    }
}
