import Foundation
import ParleyCore
@testable import ParleySDK
import Testing

/// What the client reads to send: regular files only. A folder crashed the client (Foundation's
/// `readData(ofLength:)` stops the process on a read error), `/dev/zero` never ended and a pipe
/// waited for a writer for ever; a message queued with one came back at every start.
@Suite struct FileReadingTests {
    @Test func onlyARegularFileIsRead() throws {
        let directory = temporaryDirectory().path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = (directory as NSString).appendingPathComponent("notes.txt")
        try Data("twelve bytes".utf8).write(to: URL(fileURLWithPath: file))
        let pipe = (directory as NSString).appendingPathComponent("pipe")
        #expect(mkfifo(pipe, 0o600) == 0)
        let link = (directory as NSString).appendingPathComponent("link.txt")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)

        #expect(ParleyClient.regularFileSize(file) == 12 && ParleyClient.regularFileSize(link) == 12, "a link to a file is that file")
        for path in [directory, "/dev/zero", pipe, "/no/such/file"] {
            #expect(ParleyClient.regularFileSize(path) == nil, "\(path)")
            #expect(ParleyClient.read(path, at: 0, length: 16) == nil, "\(path)")
            #expect(ParleyClient.sizeAndDigest(of: path, expected: 12) == nil, "\(path)")
        }
        #expect(ParleyClient.read(file, at: 7, length: 16) == Data("bytes".utf8))
        #expect(ParleyClient.sizeAndDigest(of: file, expected: 12)?.0 == 12)
        // A file that grew is read one part past what was expected, then given up (its size then
        // differs, and the message fails), not read to its end, however far that is.
        let grown = (directory as NSString).appendingPathComponent("grown.bin")
        try Data(count: 3 * ParleyClient.uploadChunk).write(to: URL(fileURLWithPath: grown))
        #expect(ParleyClient.sizeAndDigest(of: grown, expected: 10)?.0 == Int64(ParleyClient.uploadChunk))
    }
}

/// A file that got shorter while it went up fails its message, and the part sent is given up: it
/// held the whole file's size of the sender's quota for a day.
@MainActor
@Suite struct FailedUploadTests {
    @Test func aFileThatGotShorterFailsItsMessageAndGivesItsUploadUp() async throws {
        let fixture = Fixture()
        fixture.api.conversationList = [fixture.summary()]
        fixture.api.takesFiles = true
        let client = try fixture.makeClient()
        _ = try await fixture.connect(client)
        let path = temporaryDirectory().path + "-three-parts.bin"
        try Data(count: 3 * ParleyClient.uploadChunk).write(to: URL(fileURLWithPath: path))
        fixture.api.onAppend = { _ = truncate(path, off_t(ParleyClient.uploadChunk)) }  // after the first part, two thirds go
        let id = try client.sendFiles([path], in: fixture.conversation)
        let reason = try await eventually("the message fails") { () -> String? in
            guard case .failed(let reason) = client.outbox.entries.first(where: { $0.clientId == id })?.state else { return nil }
            return reason
        }
        #expect(reason.contains("got shorter"))
        let created = try #require(fixture.api.uploadsCreated.first)
        _ = try await eventually("the upload given up") { fixture.api.uploadsDeleted == [created] ? true : nil }
        #expect(client.outbox.entries.first { $0.clientId == id }?.attachments?.first?.uploadId == nil, "Retry makes a new upload")
        client.stop()
    }
}
