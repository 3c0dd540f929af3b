/// The id of an upload (a lowercase UUID); an attachment keeps its upload's id.
public struct UploadID: StringIdentifier {
    /// The id as it travels on the wire.
    public let rawValue: String
    /// Wraps an id without checking it (from trusted storage).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Accepts only a well-formed id (from untrusted input).
    public init?(validating string: String) {
        guard let id = Self.uuid(string) else { return nil }
        self = id
    }
}

/// How a client shows an attachment: `image` inline; `video` and `audio` with a player; `file` as a card.
public enum AttachmentKind: String, Codable, Sendable, CaseIterable {
    case image, video, audio, file
}

/// A file a message carries (docs/protocol.md "Files"). Name, type, kind, size and an image's
/// dimensions are the server's own reading of the upload; the thumbnail, placeholder and a video's
/// dimensions and duration come from the sending client.
public struct Attachment: Hashable, Codable, Sendable {
    /// The upload's id; `POST /v1/files/links` turns it into a URL.
    public var id: UploadID
    /// The cleaned file name.
    public var name: String
    /// The type the server read from the bytes.
    public var mimeType: String
    public var kind: AttachmentKind
    /// Bytes.
    public var size: Int64
    public var width: Int?
    public var height: Int?
    /// A small preview as a `data:` URL (JPEG, PNG or WebP).
    public var thumbnail: String?
    /// A BlurHash of the image or the video's first frame.
    public var placeholder: String?
    public var durationMs: Int64?

    /// Creates a value.
    public init(
        id: UploadID, name: String, mimeType: String, kind: AttachmentKind, size: Int64, width: Int? = nil, height: Int? = nil,
        thumbnail: String? = nil, placeholder: String? = nil, durationMs: Int64? = nil
    ) {
        self.id = id
        self.name = name
        self.mimeType = mimeType
        self.kind = kind
        self.size = size
        self.width = width
        self.height = height
        self.thumbnail = thumbnail
        self.placeholder = placeholder
        self.durationMs = durationMs
    }
}

/// An attachment as a send names it: a complete upload of the sender's, plus what the client made.
public struct AttachmentRequest: Codable, Equatable, Sendable {
    public var uploadId: UploadID
    /// A small JPEG, PNG or WebP, base64 (at most ``Attachments/maxThumbnailBytes`` decoded).
    public var thumbnail: String?
    /// A BlurHash, at most ``Attachments/maxPlaceholderLength`` characters.
    public var placeholder: String?
    /// Taken for videos only (an image's are read by the server).
    public var width: Int?
    public var height: Int?
    public var durationMs: Int64?

    /// Creates a value.
    public init(uploadId: UploadID, thumbnail: String? = nil, placeholder: String? = nil, width: Int? = nil, height: Int? = nil, durationMs: Int64? = nil) {
        self.uploadId = uploadId
        self.thumbnail = thumbnail
        self.placeholder = placeholder
        self.width = width
        self.height = height
        self.durationMs = durationMs
    }
}

/// The limits of attachments.
public enum Attachments {
    /// The most attachments one message carries.
    public static let maxPerMessage = 10
    /// The largest thumbnail, decoded.
    public static let maxThumbnailBytes = 12 * 1024
    /// The widest or tallest a thumbnail may be, in pixels: a few bytes of PNG can promise 90
    /// megapixels, which every recipient would decode.
    public static let maxThumbnailSide = 512
    /// The widest or tallest a profile photo may be, in pixels: it is drawn beside every message
    /// and in every list, for everyone who sees its owner (clients crop and scale it first).
    public static let maxProfilePhotoSide = 4_096
    /// The longest BlurHash.
    public static let maxPlaceholderLength = 64

    /// Whether `placeholder` is made of BlurHash's base-83 digits and no longer than allowed.
    public static func isValidPlaceholder(_ placeholder: String) -> Bool {
        let digits = Set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)
        return (6...maxPlaceholderLength).contains(placeholder.utf8.count) && placeholder.utf8.allSatisfy(digits.contains)
    }

    /// A file name fit to store and show: the last path component, without control characters,
    /// directional overrides or marks, invisible characters (zero-width space, word joiner, byte
    /// order mark; the emoji joiner stays) or line separators, trimmed, at most 255 bytes of UTF-8,
    /// a name Windows reserves for a device (`CON`, `nul.txt`, `COM1.exe`, `LPT¹`, `CONIN$`, `CON .txt`) prefixed with `_`;
    /// `fallback` when nothing is left.
    public static func cleanName(_ raw: String, fallback: String = "file") -> String {
        let last = raw.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in last.unicodeScalars {
            switch scalar.value {
            case 0..<0x20, 0x7F..<0xA0, 0x061C, 0x180E, 0x200B, 0x200C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2060...0x2064,
                0x2066...0x2069, 0xFEFF:
                continue
            default: scalars.append(scalar)
            }
        }
        var name = String(scalars).trimmingCharacters(in: " .")
        if name.utf8.count > 255 {
            // Cut the stem, not the extension: "report….pdf" still opens as a PDF, "backup….tar.gz"
            // as a gzipped tar (a short extension before the last one is kept with it).
            func extensionStart(before end: String.Index) -> String.Index? {
                name[..<end].lastIndex(of: ".").flatMap { $0 != name.startIndex && name[$0...].utf8.count <= 16 ? $0 : nil }
            }
            var dot = extensionStart(before: name.endIndex)
            if let last = dot, let earlier = extensionStart(before: last), name[earlier..<last].count <= 5,
                name[name.index(after: earlier)..<last].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
            {
                dot = earlier
            }
            var stem = String(name[..<(dot ?? name.endIndex)])
            let suffix = dot.map { String(name[$0...]) } ?? ""
            while stem.utf8.count + suffix.utf8.count > 255 { stem.removeLast() }
            name = stem + suffix
        }
        if name.isEmpty || name == ".." { return fallback }
        // Windows ignores trailing spaces before the extension ("CON .txt" is CON) and counts
        // superscript digits (COM¹) and COM0/LPT0 as device numbers.
        var stem = String(name.prefix { $0 != "." }).uppercased()
        while stem.last == " " { stem.removeLast() }
        let reserved =
            ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"].contains(stem)
            || (stem.count == 4 && ["COM", "LPT"].contains(String(stem.prefix(3))) && stem.last.map { "0123456789¹²³".contains($0) } == true)
        return reserved ? "_" + name : name
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let drop = Set(set)
        return String(self.drop(while: drop.contains).reversed().drop(while: drop.contains).reversed())
    }
}
