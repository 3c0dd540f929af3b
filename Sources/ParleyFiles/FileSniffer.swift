/// Decides what an uploaded file really is from its first bytes. The client's claimed type and file
/// name are never consulted: they are whatever the uploader wanted them to be.
///
/// An allowlist: a file is one of the ``SniffedType/known`` types only when its magic bytes say so,
/// and otherwise ``SniffedType/octetStream``. The magic numbers are checked before the text rules,
/// so a polyglot (PNG bytes that are also HTML further on) is what its first bytes say it is.
public enum FileSniffer {
    /// How many leading bytes ``sniff(_:)`` looks at: 4 KiB. Pass that many, or the whole file when
    /// it is shorter; bytes past it are ignored (so the 64 KiB read for ``ImageInfo`` may be passed
    /// as is).
    public static let prefixLength = 4096

    /// The type of the file whose first bytes are `prefix`.
    public static func sniff(_ prefix: [UInt8]) -> SniffedType {
        let bytes = prefix.count > prefixLength ? Array(prefix[..<prefixLength]) : prefix
        if let type = magic(bytes) { return type }
        // A window that ends where ``prefixLength`` cut it may end inside a UTF-8 sequence; one that
        // ends with the file may not.
        if PlainText.isPlainText(bytes, mayContinue: bytes.count == prefixLength) { return .plainText }
        return .octetStream
    }

    private static func magic(_ bytes: [UInt8]) -> SniffedType? {
        if bytes.matches([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.matches("GIF87a") || bytes.matches("GIF89a") { return .gif }
        if bytes.matches("RIFF") {
            if bytes.matches("WEBP", at: 8) { return .webp }
            if bytes.matches("WAVE", at: 8) { return .wav }
            return nil  // AVI and the rest of RIFF are not on the list.
        }
        if bytes.matches("ftyp", at: 4) { return ISOBrands.type(bytes) }
        if bytes.matches([0x1A, 0x45, 0xDF, 0xA3]) { return isWebM(bytes) ? .webm : nil }
        if bytes.matches("OggS"), bytes.byte(at: 4) == 0 { return oggType(bytes) }
        if bytes.matches("%PDF-") { return .pdf }
        // A local file header, or the end of central directory that is all of an empty archive.
        if bytes.matches([0x50, 0x4B, 0x03, 0x04]) || bytes.matches([0x50, 0x4B, 0x05, 0x06]) { return .zip }
        // Method 8 (deflate) is the only one gzip defines.
        if bytes.matches([0x1F, 0x8B, 0x08]) { return .gzip }
        if bytes.matches([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return .sevenZip }
        if isMP3(bytes) { return .mp3 }
        return nil
    }

    /// WebM is Matroska with the DocType `webm`; other Matroska files are not on the list. The
    /// EBML header that holds the DocType comes first and is a few dozen bytes long, so a scan of
    /// its start for the DocType element (ID 0x4282) is enough.
    private static func isWebM(_ bytes: [UInt8]) -> Bool {
        let end = min(bytes.count, 64)
        var offset = 4
        while offset < end - 1 {
            // The element's size is a one-byte EBML integer (0x80 | length) in every real file.
            if bytes[offset] == 0x42, bytes[offset + 1] == 0x82, let size = bytes.byte(at: offset + 2), size & 0x80 != 0 {
                return size & 0x7F == 4 && bytes.matches("webm", at: offset + 3)
            }
            offset += 1
        }
        return false
    }

    /// Ogg carries audio or video; the first packet (after the 27-byte page header and its segment
    /// table) names the codec of the first stream, and Theora's starts `\x80theora`.
    private static func oggType(_ bytes: [UInt8]) -> SniffedType {
        guard let segments = bytes.byte(at: 26) else { return .ogg }
        let packet = 27 + Int(segments)
        return bytes.matches([0x80], at: packet) && bytes.matches("theora", at: packet + 1) ? .oggVideo : .ogg
    }

    /// An ID3v2 tag, or an MPEG audio Layer III frame header. The header has no magic beyond its
    /// 11 sync bits, so its fields must also be valid, which random bytes rarely manage.
    private static func isMP3(_ bytes: [UInt8]) -> Bool {
        if bytes.matches("ID3"), bytes.count >= 10 {
            // Version 2.2–2.4, then a size of four 7-bit ("syncsafe") bytes.
            return (2...4).contains(bytes[3]) && bytes[4] != 0xFF && bytes[6..<10].allSatisfy { $0 < 0x80 }
        }
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 else { return false }
        let version = (bytes[1] >> 3) & 0x03  // 01 is reserved
        let layer = (bytes[1] >> 1) & 0x03  // 01 is Layer III; 00 (reserved) is also AAC's ADTS
        let bitrate = bytes[2] >> 4  // 0 is "free", 15 is invalid
        let sampleRate = (bytes[2] >> 2) & 0x03  // 11 is reserved
        return version != 0x01 && layer == 0x01 && (1...14).contains(bitrate) && sampleRate != 0x03
    }
}

/// The ISO base media file format (MP4, QuickTime, HEIF) names what a file is by the brands of its
/// leading `ftyp` box: a major brand, then compatible ones.
enum ISOBrands {
    private static let heic: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"]
    private static let avif: Set<String> = ["avif", "avis"]
    private static let heif: Set<String> = ["mif1", "msf1", "mif2"]
    private static let m4a: Set<String> = ["M4A ", "M4B ", "M4P "]
    private static let m4v: Set<String> = ["M4V ", "M4VH", "M4VP"]
    private static let quickTime: Set<String> = ["qt  "]
    private static let mp4: Set<String> = [
        "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "dash", "mmp4", "MSNV", "f4v ",
    ]

    /// The type the brands name, or nil when none is on the list.
    static func type(_ bytes: [UInt8]) -> SniffedType? {
        // Box size, "ftyp", major brand, minor version, then compatible brands to the box's end
        // (or to the end of the prefix, for a box longer than that).
        guard let size = bytes.uint32BE(at: 0), size >= 16, let major = brand(bytes, at: 8) else { return nil }
        let end = min(bytes.count, Int(exactly: size) ?? bytes.count)
        let compatible = stride(from: 16, to: end - 3, by: 4).compactMap { brand(bytes, at: $0) }
        // An image brand anywhere makes it an image: HEIF files often have a generic major brand
        // (`mif1`) and the codec's brand among the compatible ones. Otherwise the major brand
        // decides when it is ours, and the compatible brands when it is not.
        let all = Set([major] + compatible)
        if !all.isDisjoint(with: heic) { return .heic }
        if !all.isDisjoint(with: avif) { return .avif }
        if !all.isDisjoint(with: heif) { return .heif }
        if let type = media(major) { return type }
        return compatible.lazy.compactMap(media).first
    }

    private static func media(_ brand: String) -> SniffedType? {
        if m4a.contains(brand) { return .m4a }
        if m4v.contains(brand) { return .m4v }
        if quickTime.contains(brand) { return .quickTime }
        if mp4.contains(brand) { return .mp4 }
        return nil
    }

    /// The four bytes at `offset` as text, or nil when they are not printable ASCII (no brand is).
    private static func brand(_ bytes: [UInt8], at offset: Int) -> String? {
        guard offset >= 0, bytes.count - offset >= 4 else { return nil }
        let code = bytes[offset..<offset + 4]
        guard code.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: code, as: UTF8.self)
    }
}
