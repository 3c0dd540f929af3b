import ParleyFiles
import Testing

/// Image sizes read from headers built byte by byte, hostile headers, and the decompression-bomb guard.
@Suite struct ImageInfoTests {
    static func size(_ bytes: [UInt8], _ type: SniffedType) -> ImageSize? { ImageInfo.dimensions(of: bytes, type: type) }

    // MARK: PNG

    @Test func aOneByOnePNG() {
        let png = SampleFiles.png(width: 1, height: 1)
        #expect(FileSniffer.sniff(png) == .png)
        #expect(Self.size(png, .png) == ImageSize(width: 1, height: 1))
        #expect(Self.size(SampleFiles.png(width: 4032, height: 3024), .png) == ImageSize(width: 4032, height: 3024))
    }

    @Test func aTruncatedOrMalformedIHDRHasNoSize() {
        let png = SampleFiles.png(width: 640, height: 480)
        // Cut inside the height, inside the width, right after "IHDR", inside the signature.
        for length in [23, 18, 16, 12, 5, 0] {
            #expect(Self.size(Array(png[..<length]), .png) == nil, "cut at \(length)")
        }
        var wrongLength = png
        wrongLength[11] = 12
        #expect(Self.size(wrongLength, .png) == nil)
        var notIHDR = png
        notIHDR[12...15] = [0x49, 0x44, 0x41, 0x54]  // IDAT first
        #expect(Self.size(notIHDR, .png) == nil)
        #expect(Self.size(SampleFiles.png(width: 0, height: 10), .png) == nil)
    }

    @Test func aPNGDeclaringTenBillionPixelsIsReadButRefused() {
        let bomb = SampleFiles.png(width: 100_000, height: 100_000)
        #expect(FileSniffer.sniff(bomb) == .png)
        let size = Self.size(bomb, .png)
        #expect(size == ImageSize(width: 100_000, height: 100_000))
        #expect(size.map(ImageLimits.isAcceptable) == false)
        // The largest sides a PNG can state, which would overflow a 64-bit product if squared carelessly.
        let huge = Self.size(SampleFiles.png(width: 0xFFFF_FFFF, height: 0xFFFF_FFFF), .png)
        #expect(huge == ImageSize(width: 0xFFFF_FFFF, height: 0xFFFF_FFFF))
        #expect(huge.map(ImageLimits.isAcceptable) == false)
    }

    @Test func theLimitsAcceptUpToFiftyMegapixelsAndTwentyThousandASide() {
        #expect(ImageLimits.maxPixels == 50_000_000)
        #expect(ImageLimits.maxSide == 20_000)
        #expect(ImageLimits.isAcceptable(ImageSize(width: 1, height: 1)))
        #expect(ImageLimits.isAcceptable(ImageSize(width: 8064, height: 6048)))  // a 48 MP phone photo
        #expect(ImageLimits.isAcceptable(ImageSize(width: 20_000, height: 2_500)))  // exactly both limits
        #expect(!ImageLimits.isAcceptable(ImageSize(width: 20_001, height: 1)))
        #expect(!ImageLimits.isAcceptable(ImageSize(width: 1, height: 20_001)))
        #expect(!ImageLimits.isAcceptable(ImageSize(width: 10_000, height: 5_001)))  // 50,010,000 pixels
        #expect(!ImageLimits.isAcceptable(ImageSize(width: 0, height: 100)))
        #expect(!ImageLimits.isAcceptable(ImageSize(width: -5, height: -5)))
        #expect(!ImageLimits.isAcceptable(ImageSize(width: .max, height: .max)))
    }

    // MARK: GIF

    @Test func aJPEGCutBeforeItsScanIsNoPhotoWhenWholeButMayBeAPrefix() throws {
        let whole = SampleFiles.jpeg(width: 800, height: 600, orientation: nil)
        #expect(ImageInfo.dimensions(of: whole, type: .jpeg)?.width == 800)
        let scan = try #require(whole.firstRange(of: [0xFF, 0xDA] as [UInt8]))
        let cut = Array(whole[..<scan.lowerBound])  // the headers only: what a truncated upload keeps
        #expect(ImageInfo.dimensions(of: cut, type: .jpeg) == nil)
        #expect(ImageInfo.dimensions(of: cut + [0xFF, 0xD9], type: .jpeg) == nil, "the end before any scan")
        // The first 64 KiB of a longer file: its scan may come after what was read.
        let comments = SampleFiles.segment(0xFE, [UInt8](repeating: 0x20, count: 65_000))
        let read = Array((cut + comments + comments).prefix(ImageInfo.prefixLength))
        #expect(read.count == ImageInfo.prefixLength && ImageInfo.dimensions(of: read, type: .jpeg)?.height == 600)
    }

    @Test func gifLogicalScreen() {
        #expect(Self.size(SampleFiles.gif(width: 1, height: 1), .gif) == ImageSize(width: 1, height: 1))
        #expect(Self.size(SampleFiles.gif(width: 640, height: 480), .gif) == ImageSize(width: 640, height: 480))
        #expect(Self.size(Array(SampleFiles.gif(width: 640, height: 480)[..<9]), .gif) == nil)
    }

    // MARK: JPEG

    @Test(arguments: [true, false])
    func jpegWithEXIFOrientation6BeforeTheFrameHeader(littleEndian: Bool) {
        let jpeg = SampleFiles.jpeg(width: 4032, height: 3024, orientation: 6, littleEndian: littleEndian)
        #expect(FileSniffer.sniff(jpeg) == .jpeg)
        let size = Self.size(jpeg, .jpeg)
        #expect(size == ImageSize(width: 4032, height: 3024, orientationSwapsAxes: true))
        #expect(size?.displayWidth == 3024)
        #expect(size?.displayHeight == 4032)
    }

    @Test func onlyOrientations5To8SwapTheAxes() {
        for orientation in 0...9 {
            let size = Self.size(SampleFiles.jpeg(width: 30, height: 20, orientation: orientation, littleEndian: orientation % 2 == 0), .jpeg)
            #expect(size == ImageSize(width: 30, height: 20, orientationSwapsAxes: (5...8).contains(orientation)), "orientation \(orientation)")
        }
        #expect(Self.size(SampleFiles.jpeg(width: 30, height: 20, orientation: nil), .jpeg) == ImageSize(width: 30, height: 20))
    }

    @Test func huffmanAndArithmeticTablesAreNotFrameHeaders() {
        // DHT (C4), DAC (CC) and JPG (C8) sit among SOF0–SOF15; read as frames they would give 0x0102 × 0x0304.
        let lookalike: [UInt8] = [8, 0x01, 0x02, 0x03, 0x04, 1, 0, 0]
        let jpeg: [UInt8] =
            [0xFF, 0xD8] + SampleFiles.segment(0xC4, lookalike) + SampleFiles.segment(0xCC, lookalike) + SampleFiles.segment(0xC8, lookalike)
            + SampleFiles.segment(0xC2, [8] + SampleFiles.be16(200) + SampleFiles.be16(300) + [1, 1, 0x11, 0]) + SampleFiles.scan
        #expect(Self.size(jpeg, .jpeg) == ImageSize(width: 300, height: 200))
    }

    @Test func fillBytesBeforeAMarkerAreSkipped() {
        let jpeg: [UInt8] =
            [0xFF, 0xD8, 0xFF, 0xFF, 0xFF] + SampleFiles.segment(0xC0, [8] + SampleFiles.be16(10) + SampleFiles.be16(20) + [1, 1, 0x11, 0])
            + SampleFiles.scan
        #expect(Self.size(jpeg, .jpeg) == ImageSize(width: 20, height: 10))
    }

    @Test(.timeLimit(.minutes(10)))
    func malformedJPEGSegmentsGiveNoSizeAndNeverHang() {
        let frame = SampleFiles.segment(0xC0, [8] + SampleFiles.be16(10) + SampleFiles.be16(20) + [1, 1, 0x11, 0])
        let soi: [UInt8] = [0xFF, 0xD8]
        let cases: [(String, [UInt8])] = [
            ("length 0", soi + [0xFF, 0xE0, 0x00, 0x00] + frame),
            ("length 1", soi + [0xFF, 0xE0, 0x00, 0x01] + frame),
            ("length past the end", soi + [0xFF, 0xE1, 0xFF, 0xFF] + Array("Exif\0\0MM".utf8) + frame),
            ("length cut in half", soi + [0xFF, 0xE0, 0x00]),
            // Its TIFF data would end (with the segment) before it starts (after "Exif\0\0").
            ("an APP1 too short for the Exif it seems to hold", soi + [0xFF, 0xE1, 0x00, 0x04] + Array("Exif\0\0II".utf8) + frame),
            ("no marker where one must be", soi + [0x12, 0x34] + frame),
            ("scan before any frame", soi + SampleFiles.segment(0xDA, [1, 1, 0, 0, 0x3F, 0]) + frame),
            ("end of image before any frame", soi + [0xFF, 0xD9] + frame),
            ("a frame header cut short", soi + [0xFF, 0xC0, 0x00, 0x11, 8, 0x00]),
            ("a frame header shorter than its fields", soi + [0xFF, 0xC0, 0x00, 0x04, 8, 0x00] + frame),
            ("a frame of height 0 (left to DNL)", soi + SampleFiles.segment(0xC0, [8, 0, 0] + SampleFiles.be16(20) + [1, 1, 0x11, 0])),
            ("only fill bytes", soi + [UInt8](repeating: 0xFF, count: 100)),
            ("only SOI", soi),
            ("empty", []),
        ]
        for (name, bytes) in cases {
            #expect(Self.size(bytes, .jpeg) == nil, "\(name)")
        }
    }

    @Test func brokenEXIFStillGivesTheFrameSizeWithoutOrientation() {
        let frame = SampleFiles.segment(0xC0, [8] + SampleFiles.be16(10) + SampleFiles.be16(20) + [1, 1, 0x11, 0]) + SampleFiles.scan
        let soi: [UInt8] = [0xFF, 0xD8]
        let exif = Array("Exif\0\0".utf8)
        let cases: [(String, [UInt8])] = [
            ("IFD0 past the segment", soi + SampleFiles.segment(0xE1, exif + Array("MM".utf8) + [0, 42, 0xFF, 0xFF, 0xFF, 0xFF]) + frame),
            ("65,535 entries that are not there", soi + SampleFiles.segment(0xE1, exif + Array("II".utf8) + [42, 0, 8, 0, 0, 0, 0xFF, 0xFF]) + frame),
            ("not TIFF", soi + SampleFiles.segment(0xE1, exif + Array("XX".utf8) + [42, 0, 8, 0, 0, 0]) + frame),
            ("orientation as a LONG", soi + SampleFiles.segment(0xE1, exif + SampleFiles.tiff(entries: [(0x0112, 4, 6)], littleEndian: true)) + frame),
        ]
        for (name, bytes) in cases {
            #expect(Self.size(bytes, .jpeg) == ImageSize(width: 20, height: 10), "\(name)")
        }
    }

    @Test func aFrameHeaderPastThePrefixIsNotFound() {
        // 70 kB of metadata segments before the frame header: beyond ImageInfo.prefixLength.
        let app2 = SampleFiles.segment(0xE2, [UInt8](repeating: 0x41, count: 35_000))
        let jpeg = [0xFF, 0xD8] + app2 + app2 + SampleFiles.segment(0xC0, [8] + SampleFiles.be16(10) + SampleFiles.be16(20) + [1, 1, 0x11, 0])
        #expect(Self.size(jpeg, .jpeg) == ImageSize(width: 20, height: 10))
        #expect(Self.size(Array(jpeg.prefix(ImageInfo.prefixLength)), .jpeg) == nil)
    }

    // MARK: WebP

    @Test func webpLossyLosslessAndExtended() {
        #expect(Self.size(SampleFiles.webpVP8(width: 1, height: 1), .webp) == ImageSize(width: 1, height: 1))
        #expect(Self.size(SampleFiles.webpVP8(width: 1920, height: 1080), .webp) == ImageSize(width: 1920, height: 1080))
        // The top two bits of each VP8 dimension are its upscaling hint.
        #expect(Self.size(SampleFiles.webpVP8(width: 0xC000 | 300, height: 0x4000 | 200), .webp) == ImageSize(width: 300, height: 200))
        #expect(Self.size(SampleFiles.webpVP8L(width: 1, height: 1), .webp) == ImageSize(width: 1, height: 1))
        #expect(Self.size(SampleFiles.webpVP8L(width: 16_384, height: 3), .webp) == ImageSize(width: 16_384, height: 3))
        #expect(Self.size(SampleFiles.webpVP8X(width: 1, height: 1), .webp) == ImageSize(width: 1, height: 1))
        #expect(Self.size(SampleFiles.webpVP8X(width: 16_777_216, height: 2), .webp) == ImageSize(width: 16_777_216, height: 2))
        for sample in [SampleFiles.webpVP8(width: 5, height: 5), SampleFiles.webpVP8L(width: 5, height: 5), SampleFiles.webpVP8X(width: 5, height: 5)] {
            #expect(FileSniffer.sniff(sample) == .webp)
            #expect(Self.size(Array(sample[..<24]), .webp) == nil)
        }
        var interFrame = SampleFiles.webpVP8(width: 5, height: 5)
        interFrame[20] |= 0x01
        #expect(Self.size(interFrame, .webp) == nil)
        var unknownChunk = SampleFiles.webpVP8(width: 5, height: 5)
        unknownChunk[12...15] = [0x41, 0x4C, 0x50, 0x48]  // ALPH first
        #expect(Self.size(unknownChunk, .webp) == nil)
    }

    // MARK: HEIF

    @Test func heicPrimaryItemExtentsNotATile() {
        let heic = SampleFiles.heic()
        #expect(FileSniffer.sniff(heic) == .heic)
        // The tile's 512 × 512 comes first in ipco; the primary (grid) item's own ispe is the answer.
        #expect(Self.size(heic, .heic) == ImageSize(width: 4032, height: 3024))
        #expect(Self.size(SampleFiles.heic(wideIndices: true), .heic) == ImageSize(width: 4032, height: 3024))
        #expect(Self.size(SampleFiles.heic(version1: true), .heic) == ImageSize(width: 4032, height: 3024))
    }

    @Test func heicRotationSwapsTheAxes() {
        #expect(Self.size(SampleFiles.heic(rotation: 1), .heic) == ImageSize(width: 4032, height: 3024, orientationSwapsAxes: true))
        #expect(Self.size(SampleFiles.heic(rotation: 2), .heic) == ImageSize(width: 4032, height: 3024, orientationSwapsAxes: false))
        #expect(Self.size(SampleFiles.heic(rotation: 3), .heic) == ImageSize(width: 4032, height: 3024, orientationSwapsAxes: true))
    }

    @Test func heicWithoutUsableAssociationsFallsBackToTheLargestExtent() {
        #expect(Self.size(SampleFiles.heic(primary: false), .heic) == ImageSize(width: 4032, height: 3024))
        #expect(Self.size(SampleFiles.heic(lyingEntryCount: true), .heic) == ImageSize(width: 4032, height: 3024))
        // Comparing areas of the largest extents a file can state must not overflow.
        let ispe = { (width: Int, height: Int) in SampleFiles.fullBox("ispe", SampleFiles.be32(width) + SampleFiles.be32(height)) }
        let meta = SampleFiles.fullBox("meta", SampleFiles.box("iprp", SampleFiles.box("ipco", ispe(10, 10) + ispe(0xFFFF_FFFF, 0xFFFF_FFFF) + ispe(20, 20))))
        let huge = Self.size(SampleFiles.ftyp("heic", ["mif1", "heic"]) + meta, .heic)
        #expect(huge == ImageSize(width: 0xFFFF_FFFF, height: 0xFFFF_FFFF))
        #expect(huge.map(ImageLimits.isAcceptable) == false)
    }

    @Test(.timeLimit(.minutes(10)))
    func malformedHEIFBoxesGiveNoSize() {
        let ftyp = SampleFiles.ftyp("heic", ["mif1", "heic"])
        let properties = { (ipco: [UInt8]) in ftyp + SampleFiles.fullBox("meta", SampleFiles.box("iprp", SampleFiles.box("ipco", ipco))) }
        let cases: [(String, [UInt8])] = [
            ("no meta", ftyp + SampleFiles.box("mdat", [1, 2, 3])),
            ("meta past the prefix", ftyp + SampleFiles.be32(1_000_000) + Array("mdat".utf8) + [0, 0]),
            ("a box smaller than its header", ftyp + SampleFiles.be32(3) + Array("meta".utf8) + SampleFiles.heicMeta()),
            ("a 64-bit size beyond Int", ftyp + SampleFiles.be32(1) + Array("free".utf8) + [UInt8](repeating: 0xFF, count: 8) + SampleFiles.heicMeta()),
            ("a 64-bit size cut off", ftyp + SampleFiles.be32(1) + Array("meta".utf8) + [0, 0]),
            ("meta without its version", ftyp + SampleFiles.box("meta", [0, 0])),
            ("ispe cut short", properties(SampleFiles.fullBox("ispe", SampleFiles.be32(10)))),
            ("an ispe of 0 × 0", properties(SampleFiles.fullBox("ispe", SampleFiles.be32(0) + SampleFiles.be32(0)))),
        ]
        for (name, bytes) in cases {
            #expect(Self.size(bytes, .heic) == nil, "\(name)")
        }
        // Size 0: the box runs to the end (of the file, at the top).
        let toTheEnd = ftyp + SampleFiles.be32(0) + Array("meta".utf8) + Array(SampleFiles.heicMeta().dropFirst(8))
        #expect(Self.size(toTheEnd, .heic) == ImageSize(width: 4032, height: 3024))
    }

    // MARK: Everything else

    @Test func otherTypesAndMismatchedTypesHaveNoSize() {
        let png = SampleFiles.png(width: 10, height: 10)
        #expect(Self.size(png, .jpeg) == nil)
        #expect(Self.size(png, .gif) == nil)
        #expect(Self.size(png, .webp) == nil)
        #expect(Self.size(png, .heic) == nil)
        #expect(Self.size(png, .pdf) == nil)
        #expect(Self.size(png, .octetStream) == nil)
        #expect(Self.size([], .png) == nil)
    }
}

/// Files built byte by byte, as their specifications lay them out: small enough to read, and no
/// binary fixtures to trust.
enum SampleFiles {
    static func be16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }
    static func be24(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 16)] + be16(value) }
    static func be32(_ value: Int) -> [UInt8] { be16(value >> 16) + be16(value) }
    static func le16(_ value: Int) -> [UInt8] { be16(value).reversed() }
    static func le24(_ value: Int) -> [UInt8] { be24(value).reversed() }
    static func le32(_ value: Int) -> [UInt8] { be32(value).reversed() }

    // MARK: PNG

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func crc32(_ bytes: [UInt8]) -> Int {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return Int(~crc)
    }

    static func adler32(_ bytes: [UInt8]) -> Int {
        var (a, b) = (1, 0)
        for byte in bytes {
            a = (a + Int(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(data.count) + body + be32(crc32(body))
    }

    /// A PNG with that IHDR (8-bit RGBA) and the pixel data of one red pixel: a complete, valid file
    /// at 1 × 1, a valid header at any size.
    static func png(width: Int, height: Int) -> [UInt8] {
        let row: [UInt8] = [0, 0xFF, 0, 0, 0xFF]  // filter type 0, then R G B A
        // zlib: CMF/FLG 78 01, one final stored deflate block (01, LEN, NLEN), the bytes, their Adler-32.
        let zlib: [UInt8] = [0x78, 0x01, 0x01] + le16(row.count) + le16(~row.count) + row + be32(adler32(row))
        return pngSignature + pngChunk("IHDR", be32(width) + be32(height) + [8, 6, 0, 0, 0]) + pngChunk("IDAT", zlib) + pngChunk("IEND", [])
    }

    // MARK: GIF

    /// GIF89a with that logical screen, a 2-colour global table and one 1 × 1 image: a complete,
    /// valid file at 1 × 1.
    static func gif(width: Int, height: Int) -> [UInt8] {
        Array("GIF89a".utf8) + le16(width) + le16(height) + [0x80, 0, 0] + [0, 0, 0, 0xFF, 0xFF, 0xFF]
            + [0x2C] + le16(0) + le16(0) + le16(1) + le16(1) + [0] + [0x02, 0x02, 0x44, 0x01, 0x00] + [0x3B]
    }

    // MARK: JPEG

    /// A marker segment: FF, the marker, a length that counts itself, the data.
    static func segment(_ marker: UInt8, _ data: [UInt8]) -> [UInt8] { [0xFF, marker] + be16(data.count + 2) + data }
    /// A one-component scan header, two bytes of entropy-coded data and EOI: what follows a frame.
    static let scan: [UInt8] = segment(0xDA, [1, 1, 0, 0, 0x3F, 0]) + [0, 0, 0xFF, 0xD9]

    /// TIFF data as EXIF holds it: the header (byte order, 42, IFD0 at 8), then IFD0's entries
    /// (tag, type, a count of 1 and the value inline), then no next IFD.
    static func tiff(entries: [(tag: Int, type: Int, value: Int)], littleEndian: Bool) -> [UInt8] {
        let u16 = littleEndian ? le16 : be16
        let u32 = littleEndian ? le32 : be32
        var out = Array((littleEndian ? "II" : "MM").utf8) + u16(42) + u32(8) + u16(entries.count)
        for entry in entries {
            // A SHORT fills the first two bytes of the 4-byte value field, in either byte order.
            out += u16(entry.tag) + u16(entry.type) + u32(1) + (entry.type == 3 ? u16(entry.value) + [0, 0] : u32(entry.value))
        }
        return out + u32(0)
    }

    /// A baseline JPEG's headers: SOI, an EXIF APP1 when `orientation` is set (other tags before
    /// Orientation, as cameras write them), a quantization table, SOF0 (3 components, 4:2:0), a
    /// Huffman table, the scan header, then EOI.
    static func jpeg(width: Int, height: Int, orientation: Int?, littleEndian: Bool = false) -> [UInt8] {
        var out: [UInt8] = [0xFF, 0xD8]
        if let orientation {
            let entries = [(tag: 0x0100, type: 4, value: width), (tag: 0x0101, type: 4, value: height), (tag: 0x0112, type: 3, value: orientation)]
            out += segment(0xE1, Array("Exif\0\0".utf8) + tiff(entries: entries, littleEndian: littleEndian))
        }
        out += segment(0xDB, [0x00] + [UInt8](repeating: 1, count: 64))
        out += segment(0xC0, [8] + be16(height) + be16(width) + [3, 1, 0x22, 0, 2, 0x11, 0, 3, 0x11, 0])
        out += segment(0xC4, [0x00, 0, 1] + [UInt8](repeating: 0, count: 14) + [0])
        out += segment(0xDA, [3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 0x3F, 0]) + [0x00, 0x00]
        return out + [0xFF, 0xD9]
    }

    // MARK: WebP

    static func riffWebP(_ chunk: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array("WEBP".utf8) + Array(chunk.utf8) + le32(data.count) + data + (data.count % 2 == 1 ? [0] : [])
        return Array("RIFF".utf8) + le32(body.count) + body
    }

    /// Lossy: the frame tag (key frame, shown), the start code, the sizes, then the first partition.
    static func webpVP8(width: Int, height: Int) -> [UInt8] {
        riffWebP("VP8 ", [0x30, 0x01, 0x00, 0x9D, 0x01, 0x2A] + le16(width) + le16(height) + [UInt8](repeating: 0, count: 8))
    }

    /// Lossless: the signature byte, then width − 1 and height − 1 in 14 bits each.
    static func webpVP8L(width: Int, height: Int) -> [UInt8] {
        riffWebP("VP8L", [0x2F] + le32((width - 1) | (height - 1) << 14) + [0, 0, 0, 0])
    }

    /// Extended: flags (alpha), reserved, then canvas width − 1 and height − 1 in 24 bits each, and the image.
    static func webpVP8X(width: Int, height: Int) -> [UInt8] {
        let vp8x = riffWebP("VP8X", [0x10, 0, 0, 0] + le24(width - 1) + le24(height - 1))
        let image = Array("VP8L".utf8) + le32(9) + [0x2F] + le32(0) + [0, 0, 0, 0, 0]
        let body = Array(vp8x[8...]) + image
        return Array("RIFF".utf8) + le32(body.count) + body
    }

    // MARK: ISO BMFF

    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(8 + payload.count) + Array(type.utf8) + payload }

    static func fullBox(_ type: String, version: UInt8 = 0, flags: Int = 0, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version] + be24(flags) + payload)
    }

    static func ftyp(_ major: String, minor: Int = 0, _ compatible: [String]) -> [UInt8] {
        box("ftyp", Array(major.utf8) + be32(minor) + compatible.flatMap { Array($0.utf8) })
    }

    /// The `meta` box of a grid photo, laid out as an iPhone does: item 1 is the primary (grid)
    /// image, item 2 one of its tiles. Properties, 1-based: 1 `hvcC` (a stub), 2 the tile's `ispe`,
    /// 3 the grid's, 4 `irot` when `rotation` is set.
    /// - `primary`: with `pitm`; `wideIndices`: 15-bit property indices; `version1`: 32-bit item ids;
    /// - `lyingEntryCount`: `ipma` claims 2^32 − 1 entries and holds only the tile's.
    static func heicMeta(primary: Bool = true, rotation: Int? = nil, wideIndices: Bool = false, version1: Bool = false, lyingEntryCount: Bool = false)
        -> [UInt8]
    {
        let hdlr = fullBox("hdlr", be32(0) + Array("pict".utf8) + [UInt8](repeating: 0, count: 12) + [0])
        let pitm = version1 ? fullBox("pitm", version: 1, be32(1)) : fullBox("pitm", be16(1))
        var properties = box("hvcC", [1, 0, 0, 0]) + fullBox("ispe", be32(512) + be32(512)) + fullBox("ispe", be32(4032) + be32(3024))
        if let rotation { properties += box("irot", [UInt8(rotation)]) }
        func index(_ index: Int, essential: Bool) -> [UInt8] {
            wideIndices ? be16(index | (essential ? 0x8000 : 0)) : [UInt8(index | (essential ? 0x80 : 0))]
        }
        func item(_ id: Int, _ indices: [[UInt8]]) -> [UInt8] { (version1 ? be32(id) : be16(id)) + [UInt8(indices.count)] + indices.flatMap { $0 } }
        let grid = item(1, [index(3, essential: false)] + (rotation == nil ? [] : [index(4, essential: true)]))
        let tile = item(2, [index(1, essential: true), index(2, essential: false)])
        let entries = lyingEntryCount ? be32(0xFFFF_FFFF) + tile : be32(2) + grid + tile
        let ipma = fullBox("ipma", version: version1 ? 1 : 0, flags: wideIndices ? 1 : 0, entries)
        return fullBox("meta", hdlr + (primary ? pitm : []) + box("iprp", box("ipco", properties) + ipma))
    }

    static func heic(primary: Bool = true, rotation: Int? = nil, wideIndices: Bool = false, version1: Bool = false, lyingEntryCount: Bool = false)
        -> [UInt8]
    {
        let meta = heicMeta(primary: primary, rotation: rotation, wideIndices: wideIndices, version1: version1, lyingEntryCount: lyingEntryCount)
        return ftyp("heic", ["mif1", "heic"]) + meta + box("mdat", [0, 0, 0, 0])
    }
}
