import NIOCore
import ParleyCore
import ParleyFiles
import ParleyStore

/// What a stored file really is, read from its first bytes whatever its name or the client said:
/// the type by its magic numbers (``FileSniffer``), an image's size from its header (``ImageInfo``,
/// EXIF orientation applied). An image too large to decode safely (``ImageLimits``) or whose size
/// cannot be read is kept as a generic file, never shown inline.
enum FileReading {
    static func read(_ blob: StoredBlob, from blobs: any BlobStore) async throws -> UploadReading {
        var prefix: [UInt8] = []
        if blob.size > 0 {
            let body = try await blobs.read(blob.key, range: 0..<min(blob.size, Int64(ImageInfo.prefixLength)))
            for try await chunk in body.chunks { prefix += chunk.readableBytesView }
        }
        return reading(of: prefix, blob: blob.key.sha256)
    }

    static func reading(of prefix: [UInt8], blob: String) -> UploadReading {
        let type = FileSniffer.sniff(Array(prefix.prefix(FileSniffer.prefixLength)))
        let kind: AttachmentKind =
            switch type.kind {
            case .image: .image
            case .video: .video
            case .audio: .audio
            default: .file
            }
        guard kind == .image else { return UploadReading(blob: blob, mimeType: type.mimeType, kind: kind) }
        guard let size = ImageInfo.dimensions(of: prefix, type: type), ImageLimits.isAcceptable(size), type.inlineSafe else {
            // An image a browser cannot show (HEIC) or that is too large to decode keeps its type as a file.
            return UploadReading(blob: blob, mimeType: type.mimeType, kind: .file)
        }
        return UploadReading(blob: blob, mimeType: type.mimeType, kind: .image, width: size.displayWidth, height: size.displayHeight)
    }
}
