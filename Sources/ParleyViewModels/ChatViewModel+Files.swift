import Foundation
import ParleyCore
import ParleySDK

/// Photos and files in a chat (docs/protocol.md "Files"): sending files with the composer's text as
/// their caption, each message's files as a row shows them, and how far a pending one's upload got.
extension ChatViewModel {
    /// A file as a row shows it: an inline photo (with the box it takes before it loads), or a card.
    public struct FileDisplay: Identifiable, Equatable, Sendable {
        /// The upload's id; empty while the file is still on its way.
        public var id: String
        public var name: String
        /// "1.2 MB".
        public var sizeText: String
        public var kind: AttachmentKind
        /// Width over height, for an image or a video whose size is known: the row reserves it.
        public var aspectRatio: Double?
        /// The thumbnail's `data:` URL, shown until the file loads.
        public var thumbnail: String?
        /// The attachment, to save it (``ParleyClient/save(_:into:)``); nil while pending.
        public var attachment: Attachment?
    }

    /// Sends the files at `paths` with the composer's text as their caption, and clears the composer.
    public func sendFiles(_ paths: [String], original: Bool = false) {
        let caption = messageText
        do {
            try client.sendFiles(paths, caption: caption, in: conversation, to: other?.id, original: original)
            messageText = ""
            errorMessage = nil
        } catch {
            errorMessage = error.message
        }
    }

    /// The files a message carries, as its row shows them (none once it was deleted).
    public func files(of item: TimelineItem) -> [FileDisplay] {
        guard !item.isDeleted else { return [] }
        let confirmed = item.attachments.map { attachment in
            FileDisplay(
                id: attachment.id.rawValue, name: attachment.name, sizeText: Self.sizeText(attachment.size), kind: attachment.kind,
                aspectRatio: attachment.width.flatMap { width in attachment.height.map { Double(width) / Double(max(1, $0)) } },
                thumbnail: attachment.thumbnail, attachment: attachment)
        }
        let pending = item.pendingFiles.map { file in
            FileDisplay(id: "", name: file.name, sizeText: Self.sizeText(file.size), kind: .file, aspectRatio: nil, thumbnail: nil, attachment: nil)
        }
        return confirmed + pending
    }

    /// How far the upload of a pending message's files got, 0…1; nil when there is none under way.
    public func uploadProgress(of item: TimelineItem) -> Double? {
        item.seq == nil ? client.uploadProgress(of: item.id) : nil
    }

    /// Decimal units, as file managers show sizes.
    static func sizeText(_ bytes: Int64) -> String {
        ByteCountFormatter.string(fromByteCount: bytes, countStyle: .file)
    }
}
