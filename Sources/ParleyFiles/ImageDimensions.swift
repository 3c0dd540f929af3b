/// An image's width and height in pixels, as its header states them.
public struct ImageSize: Hashable, Sendable {
    /// Stored pixels across, before any orientation is applied.
    public var width: Int
    /// Stored pixels down, before any orientation is applied.
    public var height: Int
    /// The image is shown turned a quarter: a JPEG's EXIF Orientation is 5–8, or a HEIF image's
    /// `irot` turns it by 90° or 270°. A viewer then swaps width and height (see ``displayWidth``).
    public var orientationSwapsAxes: Bool

    public init(width: Int, height: Int, orientationSwapsAxes: Bool = false) {
        self.width = width
        self.height = height
        self.orientationSwapsAxes = orientationSwapsAxes
    }

    /// The width as shown, once the orientation is applied.
    public var displayWidth: Int { orientationSwapsAxes ? height : width }
    /// The height as shown, once the orientation is applied.
    public var displayHeight: Int { orientationSwapsAxes ? width : height }
}

/// The decompression-bomb guard. A header costs a few bytes to write and can promise any size;
/// whoever decodes the image (a thumbnailer, every client that shows it) pays for it in memory,
/// 4 bytes a pixel or more. An image outside these limits is not treated as an inline image: it
/// becomes a generic file, with no dimensions.
public enum ImageLimits {
    /// At most 50 million pixels (200 MB decoded as RGBA): above any phone camera's photos
    /// (48 MP), far below what a 100 kB PNG can claim.
    public static let maxPixels = 50_000_000
    /// At most 20,000 pixels a side: real panoramas fit, while a 1 × 50,000,000 strip (within
    /// ``maxPixels``) does not, since such shapes are a known way to break decoders and layouts.
    public static let maxSide = 20_000

    /// Whether an image of `size` may be treated as one: both sides 1...``maxSide`` and the area at
    /// most ``maxPixels``.
    public static func isAcceptable(_ size: ImageSize) -> Bool {
        guard (1...maxSide).contains(size.width), (1...maxSide).contains(size.height) else { return false }
        let (pixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        return !overflow && pixels <= maxPixels
    }
}

/// Reads an image's dimensions from its header bytes, without decoding it.
///
/// Every reader is bounded: it reads only inside the array, moves forward on every step (so it
/// ends on any input), uses checked arithmetic on sizes and offsets taken from the file, and answers
/// nil for a header that is malformed or lies past the bytes given.
public enum ImageInfo {
    /// How many leading bytes ``dimensions(of:type:)`` needs: 64 KiB. A JPEG's frame header comes
    /// after its metadata segments (EXIF alone may take up to 64 KiB, with its thumbnail); a camera
    /// file whose metadata fills nearly all of that gets nil, the price of a bounded read. The
    /// other formats state their size within their first few hundred bytes.
    public static let prefixLength = 65_536

    /// The size stated by the header among the file's first bytes `prefix`, for a JPEG, PNG, GIF,
    /// WebP or HEIF (HEIC, AVIF) `type`; nil for any other type, or when the header is not found
    /// within `prefix` or is malformed. The size is raw: check it with ``ImageLimits``. A `prefix`
    /// shorter than ``prefixLength`` is the whole file: a JPEG in it must hold its scan too.
    public static func dimensions(of prefix: [UInt8], type: SniffedType) -> ImageSize? {
        let size: ImageSize?
        switch type {
        case .png: size = png(prefix)
        case .gif: size = gif(prefix)
        case .jpeg: size = JPEGHeader.size(prefix, isWholeFile: prefix.count < prefixLength)
        case .webp: size = webp(prefix)
        case .heic, .heif, .avif: size = HEIFHeader.size(prefix)
        default: size = nil
        }
        // A zero side is no size at all (a JPEG leaves its height to a later DNL segment, say).
        guard let size, size.width > 0, size.height > 0 else { return nil }
        return size
    }

    /// PNG: the signature, then the IHDR chunk (length 13), whose data opens with width and height.
    private static func png(_ bytes: [UInt8]) -> ImageSize? {
        guard bytes.matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), bytes.uint32BE(at: 8) == 13, bytes.matches("IHDR", at: 12),
            let width = bytes.uint32BE(at: 16).flatMap({ Int(exactly: $0) }), let height = bytes.uint32BE(at: 20).flatMap({ Int(exactly: $0) })
        else { return nil }
        return ImageSize(width: width, height: height)
    }

    /// GIF: the signature, then the logical screen's width and height, little-endian.
    private static func gif(_ bytes: [UInt8]) -> ImageSize? {
        guard bytes.matches("GIF87a") || bytes.matches("GIF89a"), let width = bytes.uint16LE(at: 6), let height = bytes.uint16LE(at: 8)
        else { return nil }
        return ImageSize(width: width, height: height)
    }

    /// WebP: `RIFF`, size, `WEBP`, then the first chunk (fourcc, size, data at 20), one of:
    /// - `VP8 ` (lossy): a 3-byte frame tag, the start code 9D 01 2A, then 14-bit width and height;
    /// - `VP8L` (lossless): the signature 0x2F, then width − 1 and height − 1 in 14 bits each;
    /// - `VP8X` (extended): flags and 3 reserved bytes, then canvas width − 1 and height − 1 in
    ///   24 bits each.
    private static func webp(_ bytes: [UInt8]) -> ImageSize? {
        guard bytes.matches("RIFF"), bytes.matches("WEBP", at: 8) else { return nil }
        if bytes.matches("VP8 ", at: 12) {
            // Bit 0 of the frame tag is 0 on a key frame, the only kind with a size.
            guard let tag = bytes.byte(at: 20), tag & 0x01 == 0, bytes.matches([0x9D, 0x01, 0x2A], at: 23),
                let width = bytes.uint16LE(at: 26), let height = bytes.uint16LE(at: 28)
            else { return nil }
            // The top two bits of each are a scaling hint, not size.
            return ImageSize(width: width & 0x3FFF, height: height & 0x3FFF)
        }
        if bytes.matches("VP8L", at: 12) {
            guard bytes.byte(at: 20) == 0x2F, let bits = bytes.uint32LE(at: 21) else { return nil }
            return ImageSize(width: Int(bits & 0x3FFF) + 1, height: Int((bits >> 14) & 0x3FFF) + 1)
        }
        if bytes.matches("VP8X", at: 12) {
            guard let width = bytes.uint24LE(at: 24), let height = bytes.uint24LE(at: 27) else { return nil }
            return ImageSize(width: width + 1, height: height + 1)
        }
        return nil
    }
}
