import Foundation
import HTTPTypes
import ParleyCore
import ParleyFiles

/// A send's `attachments` as the server accepts them (docs/protocol.md "Files"): at most
/// ``Attachments/maxPerMessage``, each upload once, a thumbnail that really is a small JPEG, PNG or
/// WebP (stored as a `data:` URL of the type its bytes say), a BlurHash placeholder, sane sizes.
/// Whether the uploads are the sender's and complete is the store's check, in the send's transaction.
enum AttachmentCheck {
    static let thumbnailTypes: Set<String> = ["image/jpeg", "image/png", "image/webp"]

    static func validated(_ requests: [AttachmentRequest]) throws -> [AttachmentRequest] {
        guard requests.count <= Attachments.maxPerMessage else {
            throw ParleyError(.invalidAttachment, "A message carries at most \(Attachments.maxPerMessage) attachments.")
        }
        var seen: Set<UploadID> = []
        return try requests.map { request in
            guard let id = UploadID(validating: request.uploadId.rawValue) else { throw ParleyError(.invalidAttachment, "uploadId must be a UUID.") }
            guard seen.insert(id).inserted else {
                var error = ParleyError(.invalidAttachment, "An upload is attached once per message.")
                error.status = .conflict
                throw error
            }
            var checked = request
            checked.uploadId = id
            checked.thumbnail = try request.thumbnail.map(thumbnail)
            if let placeholder = request.placeholder, !Attachments.isValidPlaceholder(placeholder) {
                throw ParleyError(.invalidAttachment, "placeholder must be a BlurHash of at most \(Attachments.maxPlaceholderLength) characters.")
            }
            for side in [request.width, request.height].compactMap({ $0 }) where !(1...ImageLimits.maxSide).contains(side) {
                throw ParleyError(.invalidAttachment, "width and height are 1 to \(ImageLimits.maxSide) pixels.")
            }
            if let duration = request.durationMs, !(0...86_400_000).contains(duration) {
                throw ParleyError(.invalidAttachment, "durationMs is 0 to 24 hours.")
            }
            return checked
        }
    }

    /// base64 of a small image → `data:<type>;base64,…`, the type read from the bytes.
    static func thumbnail(_ base64: String) throws -> String {
        guard base64.utf8.count <= (Attachments.maxThumbnailBytes + 2) / 3 * 4 + 4, let bytes = Data(base64Encoded: base64),
            bytes.count <= Attachments.maxThumbnailBytes
        else {
            throw ParleyError(.invalidAttachment, "thumbnail must be base64 of at most \(Attachments.maxThumbnailBytes / 1024) KiB.")
        }
        let type = FileSniffer.sniff(Array(bytes.prefix(FileSniffer.prefixLength)))
        guard thumbnailTypes.contains(type.mimeType) else { throw ParleyError(.invalidAttachment, "thumbnail must be a JPEG, PNG or WebP image.") }
        let side = Attachments.maxThumbnailSide
        guard let size = ImageInfo.dimensions(of: Array(bytes), type: type), size.width <= side, size.height <= side else {
            throw ParleyError(.invalidAttachment, "thumbnail must be an image of at most \(side) × \(side) pixels.")
        }
        return "data:\(type.mimeType);base64,\(bytes.base64EncodedString())"
    }
}
