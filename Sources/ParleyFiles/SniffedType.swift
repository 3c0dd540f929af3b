/// What a file really is, as ``FileSniffer/sniff(_:)`` decided from its first bytes: never from
/// the type or name a client claimed.
///
/// The values are a closed set (the static members below, listed in ``known``): only the sniffer
/// makes them, so nothing else can mint a type that claims to be safe inline.
public struct SniffedType: Hashable, Sendable, CustomStringConvertible {
    /// The broad family, for how a client presents the file (a photo, a player, a download row).
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case image, video, audio, document, archive, text, other
    }

    /// The media type to serve the file under, e.g. `image/png`.
    public let mimeType: String
    /// The broad family (``Kind``).
    public let kind: Kind
    /// Whether the server may serve the file for display in the page (`Content-Disposition: inline`).
    /// Only JPEG, PNG, GIF and WebP: formats every browser decodes as pixels and nothing else.
    /// Never SVG or HTML (they run script) and not HEIC (browsers do not render it, so inline would
    /// buy nothing). Everything else goes out as an attachment download. Safe only together with
    /// `X-Content-Type-Options: nosniff` and this ``mimeType``, so that a browser cannot decide a
    /// polyglot (a PNG that is also HTML) is the other thing.
    public let inlineSafe: Bool
    /// The canonical extension without its dot (`jpg`, `png`, `bin`), for building a download name
    /// that cannot claim to be something else.
    public let fileExtension: String

    private init(_ mimeType: String, _ kind: Kind, _ fileExtension: String, inlineSafe: Bool = false) {
        self.mimeType = mimeType
        self.kind = kind
        self.fileExtension = fileExtension
        self.inlineSafe = inlineSafe
    }

    /// The `Content-Type` to send: the ``mimeType``, with the charset for text (the sniffer only
    /// calls text what is valid UTF-8, and a browser left to guess an encoding may guess wrong).
    public var contentType: String { kind == .text ? mimeType + "; charset=utf-8" : mimeType }

    /// The ``mimeType``, for logs and test output.
    public var description: String { mimeType }

    /// The known type of that media type (say, one read back from storage), or nil.
    public init?(mimeType: String) {
        guard let known = Self.known.first(where: { $0.mimeType == mimeType }) else { return nil }
        self = known
    }

    /// FF D8 FF.
    public static let jpeg = SniffedType("image/jpeg", .image, "jpg", inlineSafe: true)
    /// 89 `PNG` 0D 0A 1A 0A.
    public static let png = SniffedType("image/png", .image, "png", inlineSafe: true)
    /// `GIF87a` or `GIF89a`.
    public static let gif = SniffedType("image/gif", .image, "gif", inlineSafe: true)
    /// `RIFF`, a size, `WEBP`.
    public static let webp = SniffedType("image/webp", .image, "webp", inlineSafe: true)
    /// An `ftyp` box with a HEVC brand (`heic`, `heix`, `hevc`, `hevx`…): HEIF holding HEVC-coded
    /// images, as an iPhone's photos.
    public static let heic = SniffedType("image/heic", .image, "heic")
    /// An `ftyp` box with only generic HEIF brands (`mif1`, `msf1`): the codec is not named.
    public static let heif = SniffedType("image/heif", .image, "heif")
    /// An `ftyp` box with `avif` or `avis`: HEIF holding AV1-coded images. Named apart so that it is
    /// not called HEIC (its generic `mif1` brand would); not inline, like HEIC.
    public static let avif = SniffedType("image/avif", .image, "avif")

    /// An `ftyp` box with an MP4 brand (`isom`, `iso2`, `mp41`, `mp42`, `avc1`…).
    public static let mp4 = SniffedType("video/mp4", .video, "mp4")
    /// An `ftyp` box with `M4V ` (iTunes video).
    public static let m4v = SniffedType("video/x-m4v", .video, "m4v")
    /// An `ftyp` box with `qt  `.
    public static let quickTime = SniffedType("video/quicktime", .video, "mov")
    /// The EBML magic 1A 45 DF A3 with the DocType `webm` (other Matroska is not on the list).
    public static let webm = SniffedType("video/webm", .video, "webm")
    /// `OggS` whose first stream is Theora.
    public static let oggVideo = SniffedType("video/ogg", .video, "ogv")

    /// An ID3v2 tag, or an MPEG audio Layer III frame header.
    public static let mp3 = SniffedType("audio/mpeg", .audio, "mp3")
    /// An `ftyp` box with `M4A ` (AAC or ALAC audio in MP4).
    public static let m4a = SniffedType("audio/mp4", .audio, "m4a")
    /// `OggS` with any other first stream (Vorbis, Opus, FLAC).
    public static let ogg = SniffedType("audio/ogg", .audio, "ogg")
    /// `RIFF`, a size, `WAVE`.
    public static let wav = SniffedType("audio/wav", .audio, "wav")

    /// `%PDF-`.
    public static let pdf = SniffedType("application/pdf", .document, "pdf")

    /// `PK` 03 04 (a local file header), or `PK` 05 06 (the end record that is all of an empty
    /// archive). Also every format built on ZIP (docx, xlsx, epub, jar…): served as the archive it is.
    public static let zip = SniffedType("application/zip", .archive, "zip")
    /// 1F 8B 08.
    public static let gzip = SniffedType("application/gzip", .archive, "gz")
    /// `7z` BC AF 27 1C.
    public static let sevenZip = SniffedType("application/x-7z-compressed", .archive, "7z")

    /// Valid UTF-8 without binary control characters, and not markup.
    public static let plainText = SniffedType("text/plain", .text, "txt")
    /// Anything else, markup (HTML, SVG, XML) included: a generic download.
    public static let octetStream = SniffedType("application/octet-stream", .other, "bin")

    /// Every type the sniffer answers.
    public static let known: [SniffedType] = [
        .jpeg, .png, .gif, .webp, .heic, .heif, .avif,
        .mp4, .m4v, .quickTime, .webm, .oggVideo,
        .mp3, .m4a, .ogg, .wav,
        .pdf, .zip, .gzip, .sevenZip,
        .plainText, .octetStream,
    ]
}
