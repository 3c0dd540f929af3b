import Foundation
import ParleyCore
@testable import ParleySDK
import ParleyViewModels
import Testing

/// What a list preview or a notice says of a message with files (a file-only one said nothing), and
/// the path a message's file is read from (a relative one was read, at the upload, from whatever
/// folder the client was started in then).
@Suite struct MessagePreviewTests {
    func file(_ name: String, _ kind: AttachmentKind) -> ParleyCore.Attachment {
        ParleyCore.Attachment(id: UploadID(rawValue: UUID().uuidString), name: name, mimeType: "application/octet-stream", kind: kind, size: 10)
    }

    @Test func filesAreNamedWhenThereIsNoTextAndMarkedWhenThereIs() {
        #expect(MessageText.preview("hello\nsecond line", attachments: nil) == "hello")
        #expect(MessageText.preview("hello", attachments: []) == "hello")
        #expect(MessageText.preview("", attachments: [file("contract.pdf", .file)]) == "📎 contract.pdf")
        #expect(MessageText.preview("", attachments: [file("a.jpg", .image)]) == "📷 Photo")
        #expect(MessageText.preview("", attachments: [file("a.jpg", .image), file("b.jpg", .image)]) == "📷 2 photos")
        #expect(MessageText.preview("", attachments: [file("a.jpg", .image), file("b.pdf", .file)]) == "📎 2 files")
        #expect(MessageText.preview("the beach\nmore", attachments: [file("a.jpg", .image)]) == "📷 the beach")
        #expect(MessageText.preview("clip", attachments: [file("a.webm", .video)]) == "🎥 clip")
    }

    @Test func aRelativePathIsMadeAbsoluteAgainstTheCurrentDirectory() {
        let here = FileManager.default.currentDirectoryPath
        #expect(ParleyClient.absolutePath("report.txt") == (here as NSString).appendingPathComponent("report.txt"))
        // `..` is left to the kernel: after a symbolic link it is the link target's parent.
        #expect(ParleyClient.absolutePath("link/../report.txt") == (here as NSString).appendingPathComponent("link/../report.txt"))
        #expect(ParleyClient.absolutePath("/tmp/x/report.txt") == "/tmp/x/report.txt")
        #expect(ParleyClient.absolutePath("~/report.txt") == (NSHomeDirectory() as NSString).appendingPathComponent("report.txt"))
    }
}
