import Foundation
import ParleyFiles
import Testing

/// What a file is, from its first bytes only: the allowlist, the text rule, hostile files, and a fuzz.
@Suite struct FileSnifferTests {
    /// A file's bytes and what they must sniff as.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let expected: SniffedType
        var testDescription: String { name }

        init(_ name: String, _ bytes: [UInt8], _ expected: SniffedType) {
            self.name = name
            self.bytes = bytes
            self.expected = expected
        }

        init(_ name: String, _ text: String, _ expected: SniffedType) {
            self.init(name, Array(text.utf8), expected)
        }
    }

    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    static let knownFormats: [Case] = [
        Case("JPEG", SampleFiles.jpeg(width: 8, height: 8, orientation: 6), .jpeg),
        Case("JPEG/JFIF", [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + ascii("JFIF\0"), .jpeg),
        Case("PNG", SampleFiles.png(width: 1, height: 1), .png),
        Case("GIF89a", SampleFiles.gif(width: 1, height: 1), .gif),
        Case("GIF87a", ascii("GIF87a") + [1, 0, 1, 0, 0, 0, 0], .gif),
        Case("WebP VP8", SampleFiles.webpVP8(width: 1, height: 1), .webp),
        Case("WebP VP8L", SampleFiles.webpVP8L(width: 1, height: 1), .webp),
        Case("WebP VP8X", SampleFiles.webpVP8X(width: 1, height: 1), .webp),
        Case("HEIC", SampleFiles.heic(), .heic),
        Case("HEIC with a generic major brand", SampleFiles.ftyp("mif1", ["mif1", "heic"]), .heic),
        Case("HEIF image sequence", SampleFiles.ftyp("msf1", ["msf1", "iso8"]), .heif),
        Case("HEIF, codec unnamed", SampleFiles.ftyp("mif1", ["mif1"]), .heif),
        Case("AVIF", SampleFiles.ftyp("avif", ["avif", "mif1", "miaf", "MA1B"]), .avif),
        Case("MP4", SampleFiles.ftyp("isom", minor: 512, ["isom", "iso2", "avc1", "mp41"]) + SampleFiles.box("mdat", [0]), .mp4),
        Case("MP4 (mp42)", SampleFiles.ftyp("mp42", ["mp42", "isom"]), .mp4),
        Case("3GP, compatible with isom", SampleFiles.ftyp("3gp5", ["3gp5", "isom"]), .mp4),
        Case("M4V", SampleFiles.ftyp("M4V ", ["M4V ", "M4A ", "mp42", "isom"]), .m4v),
        Case("QuickTime", SampleFiles.ftyp("qt  ", minor: 0x2005_0300, ["qt  "]), .quickTime),
        Case("M4A", SampleFiles.ftyp("M4A ", ["M4A ", "mp42", "isom"]), .m4a),
        Case("WebM", [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84] + ascii("webm") + [0x42, 0x87, 0x81, 0x04], .webm),
        Case("MP3 with ID3v2.4", ascii("ID3") + [4, 0, 0, 0, 0, 0x02, 0x01] + ascii("TIT2"), .mp3),
        Case("MP3 frame (MPEG-1 Layer III, 128 kbit/s, 44.1 kHz)", [0xFF, 0xFB, 0x90, 0x64, 0x00, 0x00], .mp3),
        Case("MP3 frame (MPEG-2 Layer III)", [0xFF, 0xF3, 0x48, 0xC4, 0x00], .mp3),
        Case("Ogg Vorbis", ascii("OggS") + [0, 2] + [UInt8](repeating: 0, count: 20) + [1, 30, 1] + ascii("vorbis"), .ogg),
        Case("Ogg Opus", ascii("OggS") + [0, 2] + [UInt8](repeating: 0, count: 20) + [1, 19] + ascii("OpusHead"), .ogg),
        Case("Ogg Theora", ascii("OggS") + [0, 2] + [UInt8](repeating: 0, count: 20) + [1, 42, 0x80] + ascii("theora"), .oggVideo),
        Case("WAV", ascii("RIFF") + SampleFiles.le32(36) + ascii("WAVEfmt ") + SampleFiles.le32(16) + [1, 0, 1, 0], .wav),
        Case("PDF", "%PDF-1.7\n%\u{E2}\u{E3}\u{CF}\u{D3}\n1 0 obj\n<< /Type /Catalog >>\nendobj\n", .pdf),
        Case("ZIP", ascii("PK") + [3, 4, 20, 0, 0, 0, 8, 0] + [UInt8](repeating: 0, count: 18) + ascii("a.txt"), .zip),
        Case("empty ZIP", ascii("PK") + [5, 6] + [UInt8](repeating: 0, count: 18), .zip),
        Case("gzip", [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03], .gzip),
        Case("7z", [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C, 0x00, 0x04], .sevenZip),
        Case("Japanese text", "こんにちは、世界。\n日本語のテキストです。\t絵文字も🎌\r\n", .plainText),
        Case("text with terminal colours", "\u{1B}[31mred\u{1B}[0m and a form feed\u{0C}\n", .plainText),
        Case("text with a byte order mark", "\u{FEFF}hello", .plainText),
        Case("text that is not a tag", "<3 to all, and a < b > c", .plainText),
        Case("text mentioning a script later", "Look at this:\n<script>alert(1)</script>", .plainText),
        Case("a tag-like word that is no tag", "<htmlish> is not a tag", .plainText),
    ]

    @Test(arguments: knownFormats)
    func knownFormatsSniffAsThemselves(_ file: Case) {
        #expect(FileSniffer.sniff(file.bytes) == file.expected)
    }

    static let genericFiles: [Case] = [
        Case("empty", [UInt8](), .octetStream),
        Case("a NUL in text", "hello\0world", .octetStream),
        Case("a control character in text", "hello\u{01}world", .octetStream),
        Case("a vertical tab", "hello\u{0B}world", .octetStream),
        Case("DEL", "hello\u{7F}", .octetStream),
        Case("a C1 control (NEL)", "hello\u{85}world", .octetStream),
        Case("Latin-1, not UTF-8", [0x63, 0x61, 0x66, 0xE9], .octetStream),
        Case("an overlong slash", [0x2F, 0xC0, 0xAF], .octetStream),
        Case("a UTF-16 surrogate in UTF-8", [0x61, 0xED, 0xA0, 0x80], .octetStream),
        Case("past U+10FFFF", [0x61, 0xF4, 0x90, 0x80, 0x80], .octetStream),
        Case("a short file ending inside a character", Array(Array("日本語".utf8).dropLast()), .octetStream),
        Case("UTF-16 text", [0xFF, 0xFE, 0x68, 0x00, 0x69, 0x00], .octetStream),
        Case("AVI (RIFF, not on the list)", ascii("RIFF") + SampleFiles.le32(4) + ascii("AVI LIST"), .octetStream),
        Case("Matroska that is not WebM", [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x88] + ascii("matroska"), .octetStream),
        Case("ISO BMFF with only unknown brands", SampleFiles.ftyp("crx ", ["crx "]), .octetStream),
        Case("an ftyp box too small for its brands", SampleFiles.be32(8) + ascii("ftypheic"), .octetStream),
        Case("MPEG audio Layer II", [0xFF, 0xFD, 0x90, 0x64], .octetStream),
        Case("AAC (ADTS)", [0xFF, 0xF1, 0x50, 0x80], .octetStream),
        Case("a bad MP3 bitrate", [0xFF, 0xFB, 0xF0, 0x64], .octetStream),
        Case("ID3 with a bad size", ascii("ID3") + [4, 0, 0, 0x80, 0, 0, 0], .octetStream),
        Case("an ELF executable", [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0], .octetStream),
        Case("a Windows executable", ascii("MZ") + [0x90, 0, 3, 0, 0, 0], .octetStream),
    ]

    @Test(arguments: genericFiles)
    func anythingElseIsAGenericFile(_ file: Case) {
        #expect(FileSniffer.sniff(file.bytes) == file.expected)
    }

    static let markup: [Case] = [
        Case("HTML", "<!DOCTYPE html><html><body>hi</body></html>", .octetStream),
        Case("HTML after a BOM and whitespace", "\u{FEFF} \n\t\r\n  <HtMl><script>alert(document.cookie)</script>", .octetStream),
        Case("SVG with a script", "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>", .octetStream),
        Case("SVG after an XML declaration", "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"/>", .octetStream),
        Case("a bare script", "<SCRIPT>alert(1)</SCRIPT>", .octetStream),
        Case("a head", "<head><meta charset=utf-8>", .octetStream),
        Case("a body", "<body onload=alert(1)>", .octetStream),
        Case("an iframe", "\n<iframe src=https://example.com>", .octetStream),
        Case("an HTML comment", "<!-- hi -->\n<p>text", .octetStream),
        Case("a paragraph", "<p>hello</p>", .octetStream),
        Case("a tag cut off by the end", "<scr", .octetStream),
    ]

    @Test(arguments: markup)
    func markupIsNeverText(_ file: Case) {
        let type = FileSniffer.sniff(file.bytes)
        #expect(type == file.expected)
        #expect(type.kind == .other)
        #expect(!type.inlineSafe)
    }

    @Test func aPNGThatIsAlsoHTMLIsAPNG() {
        // The signature and IHDR, then HTML where the pixel data should be.
        let polyglot = Array(SampleFiles.png(width: 1, height: 1)[..<33]) + Self.ascii("<html><script>alert(1)</script></html>")
        let type = FileSniffer.sniff(polyglot)
        #expect(type == .png)
        #expect(type.inlineSafe)
        #expect(ImageInfo.dimensions(of: polyglot, type: type) == ImageSize(width: 1, height: 1))
    }

    @Test func htmlWithAPNGInsideIsAGenericFile() {
        let html = Self.ascii("<html><body><img src=x>") + SampleFiles.png(width: 1, height: 1) + Self.ascii("</body></html>")
        let type = FileSniffer.sniff(html)
        #expect(type == .octetStream)
        #expect(type.kind == .other)
        #expect(ImageInfo.dimensions(of: html, type: type) == nil)
    }

    @Test func onlyJPEGPNGGIFAndWebPAreInlineSafe() {
        #expect(Set(SniffedType.known.filter(\.inlineSafe)) == [.jpeg, .png, .gif, .webp])
        #expect(!SniffedType.heic.inlineSafe)
        #expect(Set(SniffedType.known.map(\.mimeType)).count == SniffedType.known.count)
        #expect(Set(SniffedType.known.map(\.fileExtension)).count == SniffedType.known.count)
        #expect(SniffedType.jpeg.fileExtension == "jpg")
        #expect(SniffedType.octetStream.fileExtension == "bin")
        #expect(SniffedType.plainText.contentType == "text/plain; charset=utf-8")
        #expect(SniffedType.png.contentType == "image/png")
        #expect(SniffedType(mimeType: "image/webp") == .webp)
        #expect(SniffedType(mimeType: "image/svg+xml") == nil)
        #expect(SniffedType(mimeType: "text/html") == nil)
    }

    @Test func onlyThePrefixIsLookedAt() {
        // Text for 4 KiB, then a NUL: the NUL is past what sniff looks at.
        let text = [UInt8](repeating: 0x61, count: FileSniffer.prefixLength) + [0]
        #expect(FileSniffer.sniff(text) == .plainText)
        // 3-byte characters: the 4 KiB cut falls inside one, which is no reason to call it binary.
        let japanese = Array(String(repeating: "あ", count: 2_000).utf8)
        #expect(FileSniffer.prefixLength % 3 != 0)
        #expect(FileSniffer.sniff(japanese) == .plainText)
        #expect(FileSniffer.sniff(Array(japanese[..<FileSniffer.prefixLength])) == .plainText)
        // An image's 64 KiB prefix may be passed as is.
        let png = SampleFiles.png(width: 1, height: 1) + [UInt8](repeating: 0, count: ImageInfo.prefixLength)
        #expect(FileSniffer.sniff(png) == .png)
    }

    // MARK: Fuzz

    /// SplitMix64: a fixed seed makes every run try the same inputs, so a failure reproduces.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Every type with a reader, whatever the bytes sniff as: random bytes reach each parser.
    static let imageTypes: [SniffedType] = [.png, .gif, .jpeg, .webp, .heic, .heif, .avif]

    /// What is wrong with the sniffer's and the size readers' answers for `bytes` (nothing, usually).
    static func problems(_ bytes: [UInt8]) -> [String] {
        var problems: [String] = []
        let type = FileSniffer.sniff(bytes)
        if !SniffedType.known.contains(type) { problems.append("unknown type \(type) for \(bytes.prefix(16))") }
        for candidate in imageTypes + [type] {
            if let size = ImageInfo.dimensions(of: bytes, type: candidate), size.width <= 0 || size.height <= 0 {
                problems.append("size \(size) as \(candidate) for \(bytes.prefix(16))")
            }
        }
        return problems
    }

    /// Runs a fuzz loop on a thread of its own. On the two threads of Swift's cooperative pool it
    /// starved the rest of the suite, or, giving its thread back now and then, waited behind it for
    /// most of a minute: here its time is its own work, which the time limit then bounds.
    static func fuzz(_ loop: @escaping @Sendable () -> [String]) async -> [String] {
        await withCheckedContinuation { done in
            Thread { done.resume(returning: loop()) }.start()
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func randomBytesNeverCrashOrHang() async {
        let problems = await Self.fuzz {
            var random = SeededGenerator(state: 0x5EED_1234)
            // Half the arrays open with a format's magic, so the parsers get past their first check.
            let openings: [[UInt8]] = [
                [], [0xFF, 0xD8], SampleFiles.pngSignature + [0, 0, 0, 13] + Self.ascii("IHDR"), Self.ascii("GIF89a"),
                Self.ascii("RIFF\0\0\0\0WEBPVP8 "), Self.ascii("RIFF\0\0\0\0WEBPVP8X"), SampleFiles.ftyp("heic", ["mif1"]), Self.ascii("\u{FEFF}<"),
            ]
            return (0..<2_000).flatMap { round in
                let length = Int.random(in: 0...512, using: &random)
                let tail = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                return Self.problems(round % 2 == 0 ? tail : openings[(round / 2) % openings.count] + tail)
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    @Test(.timeLimit(.minutes(10)))
    func mutatedValidFilesNeverCrashOrHang() async {
        let problems = await Self.fuzz {
            var random = SeededGenerator(state: 42)
            let valid: [[UInt8]] = [
                SampleFiles.jpeg(width: 300, height: 200, orientation: 6, littleEndian: true), SampleFiles.jpeg(width: 300, height: 200, orientation: 8),
                SampleFiles.png(width: 3, height: 2), SampleFiles.gif(width: 3, height: 2),
                SampleFiles.webpVP8(width: 3, height: 2), SampleFiles.webpVP8L(width: 3, height: 2), SampleFiles.webpVP8X(width: 3, height: 2),
                SampleFiles.heic(), SampleFiles.heic(rotation: 1, wideIndices: true, version1: true),
            ]
            // Lengths, counts and offsets are what parsers trip on: mostly the headers get hit, mostly
            // with values at the edges.
            let edges: [UInt8] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 0x7F, 0x80, 0xFE, 0xFF]
            return (0..<8_000).flatMap { round in
                var bytes = valid[round % valid.count]
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let end = Bool.random(using: &random) ? min(bytes.count, 64) : bytes.count
                    let value = Bool.random(using: &random) ? edges.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
                    bytes[Int.random(in: 0..<end, using: &random)] = value
                }
                if Int.random(in: 0..<4, using: &random) == 0 { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random))) }
                return Self.problems(bytes)
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }
}
