import Foundation
import ParleyCore
import ParleySDK
import ParleyViewModels
import Testing

/// ``MessageOutbox`` rule 13 and the chat's file rows, without a server.
@MainActor
@Suite struct FileOutboxTests {
    @Test func aMessageWithFilesWaitsForItsUploadsAndHoldsBackItsConversation() throws {
        let conversation = ConversationID.direct(.random(), .random())
        var outbox = MessageOutbox()
        let file = PendingAttachment(path: "/tmp/a.jpg", name: "a.jpg", size: 10, sha256: String(repeating: "0", count: 64), original: true)
        let photo = outbox.enqueue(text: "", conversation: conversation, recipient: nil, attachments: [file], now: .now())
        let after = outbox.enqueue(text: "after the photo", conversation: conversation, recipient: nil, now: .now())
        #expect(outbox.takeSendable(now: .now()).isEmpty, "the photo is not up yet, and the text after it waits (order)")
        #expect(outbox.nextUpload()?.clientId == photo.clientId)
        let id = UploadID.random()
        outbox.updateAttachment(photo.clientId, at: 0) { $0.uploadId = id }
        // Kept across a restart: the upload goes on where the server stopped.
        let path = temporaryDirectory().appendingPathComponent("store.sqlite").path
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try LocalStore(path: path).save(outbox: outbox.entries)
        var restored = MessageOutbox(entries: try LocalStore(path: path).outbox())
        #expect(restored.nextUpload()?.attachment.uploadId == id)
        #expect(restored.nextUpload()?.attachment.original == true, "sent as it was, after a restart too")
        restored.updateAttachment(photo.clientId, at: 0) { $0.uploaded = true }
        #expect(restored.nextUpload() == nil)
        #expect(restored.takeSendable(now: .now()).map(\.clientId) == [photo.clientId])
        restored.confirm(photo.clientId, seq: 1)
        #expect(restored.takeSendable(now: .now()).map(\.clientId) == [after.clientId])
    }

    @Test func aChatShowsAPendingFileAndTheServersRefusalFailsTheMessage() async throws {
        let f = Fixture()
        let client = try f.makeClient()
        let chat = ChatViewModel(client: client, conversation: f.conversation, otherUser: f.grace)
        let path = temporaryDirectory().path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let file = (path as NSString).appendingPathComponent("report.pdf")
        try Data(repeating: 7, count: 1_500_000).write(to: URL(fileURLWithPath: file))
        chat.messageText = "the report"
        chat.sendFiles([file])
        #expect(chat.messageText.isEmpty && chat.errorMessage == nil)
        let item = try #require(client.timeline(f.conversation).last)
        #expect(item.text == "the report" && chat.files(of: item).map(\.name) == ["report.pdf"])
        #expect(chat.files(of: item).first?.sizeText.contains("1.5") == true)
        // The stand-in API takes no files: the message fails with the server's reason, and is kept.
        let failed = try await eventually("refused") { () -> String? in
            if case .failed(let reason)? = client.timeline(f.conversation).last?.status { reason } else { nil }
        }
        #expect(failed.contains("does not take files"))
        chat.sendFiles(["/no/such/file"])
        #expect(chat.errorMessage?.contains("Cannot read") == true)
        // A photo goes without its metadata unless sent as it was: what the upload's creation says.
        for original in [false, true] {
            let fixture = Fixture()
            fixture.api.takesFiles = true
            let sender = try fixture.makeClient()
            _ = try sender.sendFiles([file], in: fixture.conversation, original: original)
            #expect(try await eventually("created") { fixture.api.uploadsOriginal.first } == original)
            sender.stop()
        }
    }

    /// What a server names a file cannot put it outside the folder, and a file served short is not
    /// left looking saved.
    @Test func aSavedFileStaysInItsFolderAndIsWholeOrNotThere() async throws {
        let fixture = Fixture()
        let client = try fixture.makeClient()
        let folder = fixture.directory.appendingPathComponent("saved-\(UUID().uuidString)").path
        let whole = Attachment(id: .random(), name: "../../escape.sh", mimeType: "text/plain", kind: .file, size: 5)
        fixture.api.files[whole.id] = Data("hello".utf8)
        let path = try await client.save(whole, into: folder)
        #expect(path == (folder as NSString).appendingPathComponent("escape.sh"))
        #expect(FileManager.default.contents(atPath: path) == Data("hello".utf8))
        let short = Attachment(id: .random(), name: "report.pdf", mimeType: "application/pdf", kind: .file, size: 10)
        fixture.api.files[short.id] = Data("half".utf8)
        await #expect(throws: ParleyClientError.self) { try await client.save(short, into: folder) }
        #expect(!FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent("report.pdf")))
        // A name taken by a link, one that points nowhere too, is neither written through nor replaced.
        let outside = fixture.directory.appendingPathComponent("outside-\(UUID().uuidString)").path
        let link = (folder as NSString).appendingPathComponent("notes.txt")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: outside)
        let notes = Attachment(id: .random(), name: "notes.txt", mimeType: "text/plain", kind: .file, size: 5)
        fixture.api.files[notes.id] = Data("notes".utf8)
        #expect(try await client.save(notes, into: folder) == (folder as NSString).appendingPathComponent("notes (1).txt"))
        #expect(try await client.save(notes, into: folder) == (folder as NSString).appendingPathComponent("notes (2).txt"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == outside, "the link is as it was")
        #expect(!FileManager.default.fileExists(atPath: outside), "nothing written where it points")
        // A name as long as a name may be is saved again under a shorter stem, whole characters kept.
        let long = Attachment(id: .random(), name: String(repeating: "é", count: 125) + ".txt", mimeType: "text/plain", kind: .file, size: 5)
        fixture.api.files[long.id] = Data("longs".utf8)
        let first = try await client.save(long, into: folder), second = try await client.save(long, into: folder)
        #expect(first != second && (second as NSString).lastPathComponent.hasSuffix("é (1).txt"))
        #expect((second as NSString).lastPathComponent.utf8.count <= 255 && FileManager.default.contents(atPath: second) == Data("longs".utf8))
    }
}
