import Foundation
import HTTPTypes
import NIOCore
import ParleyCore
import ParleyFiles
import ParleyStore
import ParleyTestSupport
@testable import ParleyServer
import Testing

/// tus uploads over HTTP (docs/protocol.md "Files", ``FileService``'s rules); every answer is held to openapi.yaml.
@Suite struct UploadRouteTests {
    @Test func aLiteralRouteBesideAParameterOneTakesTheMethodsOfBoth() {
        let routes = RouteMethods()
        routes.record([("/v1/files/:id", .get), ("/v1/files/links", .post), ("/v1/files/:id/content", .get)])
        #expect(routes.methods(for: "/v1/files/links") == [.get, .post])
        #expect(routes.methods(for: "/v1/files/abc") == [.get])
        #expect(routes.methods(for: "/v1/nothing") == nil)
    }

    @Test func aResumableUploadGoesOnFromTheServersOffsetAndEndsWithTheServersReading() async throws {
        try await TestServer.run { api in
            let ada = try await api.register("ada"), grace = try await api.register("grace")
            let options = try await api.request(.options, "/v1/uploads")
            #expect(options.status == .noContent && options.headers[HTTPField.Name("Tus-Version")!] == "1.0.0")
            #expect(options.headers[HTTPField.Name("Tus-Extension")!]?.contains("checksum") == true)
            let png = TestFiles.png(width: 300, height: 200)
            let unversioned = try await api.createUpload(ada, length: png.count, extra: [TestAPI.tusResumable: "0.2.2"])
            #expect(unversioned.status == .preconditionFailed && unversioned.headers[HTTPField.Name("Tus-Version")!] == "1.0.0")
            let created = try await api.createUpload(ada, length: png.count, name: "../../etc/beach\u{202E}gnp.exe", promise: TestAPI.sha256(png))
            #expect(created.status == .created && created.headers[TestAPI.uploadOffset] == "0" && created.headers[TestAPI.tusResumable] == "1.0.0")
            let location = try #require(created.headers[.location])
            #expect(try created.decode(API.Upload.self).name == "beachgnp.exe", "no path, no direction override")
            let half = png.count / 2
            #expect(try await api.patchUpload(ada, location, offset: 0, Array(png[..<half])).headers[TestAPI.uploadOffset] == String(half))
            let wrongOffset = try await api.patchUpload(ada, location, offset: 0, Array(png[half...]))
            #expect(wrongOffset.status == .conflict && wrongOffset.headers[TestAPI.uploadOffset] == String(half))
            // A chunk whose checksum does not match is dropped whole.
            let corrupt = try await api.patchUpload(ada, location, offset: half, [UInt8](repeating: 0, count: 10), checksum: TestAPI.sha256([1]))
            #expect(corrupt.status.code == 460 && corrupt.errorCode == .checksumMismatch)
            #expect(try await api.headUpload(ada, location).headers[TestAPI.uploadOffset] == String(half))
            #expect(try await api.headUpload(grace, location).status == .notFound, "someone else's upload")
            let notBytes = try await api.request(
                .patch, location, token: ada.token, json: "{}", headers: [TestAPI.tusResumable: "1.0.0", TestAPI.uploadOffset: String(half)])
            #expect(notBytes.status == .unsupportedMediaType)
            let pastTheEnd = try await api.patchUpload(ada, location, offset: half, Array(png[half...]) + [1, 2, 3])
            #expect(pastTheEnd.status == .contentTooLarge && pastTheEnd.errorCode == .uploadTooLarge)
            #expect(try await api.headUpload(ada, location).headers[TestAPI.uploadOffset] == String(half))
            let rest = try await api.patchUpload(ada, location, offset: half, Array(png[half...]), checksum: TestAPI.sha256(Array(png[half...])))
            #expect(rest.status == .noContent && rest.headers[TestAPI.uploadOffset] == String(png.count))
            let upload = try await api.request(.get, location, token: ada.token).decode(API.Upload.self)
            #expect(upload.complete && upload.kind == .image && upload.mimeType == "image/png" && upload.width == 300 && upload.height == 200)
            // A complete upload takes nothing more, and says so, not "continue from there".
            let again = try await api.patchUpload(ada, location, offset: png.count, [1])
            #expect(again.status == .conflict && again.headers[TestAPI.uploadOffset] == String(png.count))
            #expect(try again.decode(ErrorBody.self).error.message.contains("complete"))
        }
    }

    /// A server where Ada's quota (1,500 bytes) holds one file of at most 1,000 bytes.
    static func withRoomForOneFile(
        configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: @escaping @Sendable (TestAPI, Account) async throws -> Void
    ) async throws {
        try await TestServer.run(configure: {
            $0.files.maxUploadBytes = 1000
            $0.files.quotaBytes = 1500
            $0.stopRateLimitClock()
            configure(&$0)
        }) { api in
            try await body(api, try await api.register("ada"))
        }
    }

    /// A creation-with-upload whose bytes fail answers without a Location, so its upload goes with
    /// it: failed attempts never hold the quota.
    @Test func aFailedCreationWithUploadHoldsNoQuota() async throws {
        try await Self.withRoomForOneFile { api, ada in
            for _ in 0..<3 {
                let overlong = try await api.createUpload(ada, length: 999, body: [UInt8](repeating: 1, count: 1000))
                #expect(overlong.status == .contentTooLarge && overlong.errorCode == .uploadTooLarge && overlong.headers[.location] == nil)
            }
            let badChunk = try await api.createUpload(
                ada, length: 999, body: [UInt8](repeating: 1, count: 999),
                extra: [TestAPI.uploadChecksum: "sha256 " + Data(TestAPI.sha256([9])).base64EncodedString()])
            #expect(badChunk.status.code == 460 && badChunk.headers[.location] == nil)
            let whole = try await api.createUpload(ada, length: 1000)
            #expect(whole.status == .created, "the failed attempts left nothing counted: \(whole.status)")
        }
    }

    /// The same when the client goes away mid-body, or stalls until the body timeout, with either
    /// framing: a killed app's socket closes cleanly (a FIN), and Hummingbird ends a body whose
    /// connection ended as if it were whole, so a chunked one (no Content-Length to fall short of)
    /// was kept and held its quota for a day (HTTPRequestGuard rule 3). And while its bytes arrive
    /// the upload is not recorded (FileService rule 7): a server stopped then keeps none.
    @Test(arguments: [false, true], [false, true])
    func aCreationWithUploadWhoseClientWentAwayHoldsNoQuota(chunked: Bool, stalls: Bool) async throws {
        let files = FileManager.default.temporaryDirectory.appendingPathComponent("parley-cut-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: files) }
        let staging = files.appendingPathComponent("staging")
        try await Self.withRoomForOneFile(configure: {
            $0.files.blobStore = files.path
            $0.httpTimeouts.body = .seconds(4)  // time to look at the staging before the stall is let go
        }) { api, ada in
            let connection = try await RawConnection.open(port: api.port)
            try await connection.send(
                "POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ada.token)\r\nTus-Resumable: 1.0.0\r\n"
                    + "Upload-Length: 1000\r\nUpload-Metadata: \(TestAPI.metadata(name: "cut.bin"))\r\n"
                    + "Content-Type: application/offset+octet-stream\r\n"
                    + (chunked ? "Transfer-Encoding: chunked\r\n\r\n258\r\n" : "Content-Length: 1000\r\n\r\n"))
            try await connection.send([UInt8](repeating: 7, count: 600) + (chunked ? Array("\r\n".utf8) : []))
            try await eventually("the body being staged") { Self.stagedSizes(staging).count == 1 }  // kept in memory up to 1 MiB
            #expect(try await api.store.uploadedBytes(of: ada.id) == 0, "not recorded while its bytes arrive")
            if !stalls { try await connection.shutdownOutput() }
            try await connection.wait("the answer, or a close") { text, closed in closed || text.contains("\r\n\r\n") }
            #expect(!connection.text.lowercased().contains("location:"), "no upload to resume: \(connection.text.prefix(80))")
            if stalls { #expect(connection.text.hasPrefix("HTTP/1.1 408")) }
            await connection.close()
            // The handler ends after the connection does: wait for it (a hang guard, not a timing check).
            try await eventually("the staged bytes removed") { Self.stagedSizes(staging).isEmpty }
            let whole = try await api.createUpload(ada, length: 1000)
            #expect(whole.status == .created, "the cut attempt left nothing counted: \(whole.status)")
        }
    }

    /// Rule 7's look before the bytes counts the creations whose bytes are still arriving: two at
    /// once cannot each pass a quota they fill together (only the record would have refused the
    /// second, after all its bytes).
    @Test func creationsWhoseBytesAreArrivingCountAgainstTheQuota() async throws {
        let files = FileManager.default.temporaryDirectory.appendingPathComponent("parley-arriving-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: files) }
        try await Self.withRoomForOneFile(configure: { $0.files.blobStore = files.path }) { api, ada in
            let first = try await RawConnection.open(port: api.port)
            try await first.send(
                "POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ada.token)\r\nTus-Resumable: 1.0.0\r\n"
                    + "Upload-Length: 1000\r\nUpload-Metadata: \(TestAPI.metadata(name: "first.bin"))\r\n"
                    + "Content-Type: application/offset+octet-stream\r\nContent-Length: 1000\r\n\r\n")
            try await first.send([UInt8](repeating: 1, count: 400))
            try await eventually("the first body being staged") { Self.stagedSizes(files.appendingPathComponent("staging")).count == 1 }
            let second = try await api.createUpload(ada, length: 1000, body: [UInt8](repeating: 2, count: 1000))
            #expect(second.status == .contentTooLarge && second.errorCode == .quotaExceeded, "refused before its bytes: \(second.status)")
            try await first.send([UInt8](repeating: 1, count: 600))
            try await first.wait("the first's answer") { text, _ in text.contains("\r\n\r\n") }
            #expect(first.text.hasPrefix("HTTP/1.1 201"), "\(first.text.prefix(40))")
            await first.close()
            let small = try await api.createUpload(ada, length: 500, body: [UInt8](repeating: 3, count: 500))
            #expect(small.status == .created, "the first's room was handed back when it was recorded: \(small.status)")
        }
    }

    /// A PATCH whose connection is cut mid-body (chunked, so only HTTPRequestGuard rule 3 tells)
    /// keeps what arrived (FileService rule 2), and the upload resumes from there to the same file.
    @Test func aCutPatchKeepsWhatArrivedAndTheUploadResumes() async throws {
        try await TestServer.run { api in
            let (ada, bytes, location) = try await Self.promisedUpload(api)
            let patch = try await Self.cutPatch(
                api, ada, location, headers: "Upload-Offset: 0\r\nTransfer-Encoding: chunked\r\n\r\n4b0\r\n",
                body: Array(bytes[..<1200]) + Array("\r\n".utf8))
            try await eventually("the first 1,200 bytes kept") {
                try await api.headUpload(ada, location).headers[TestAPI.uploadOffset] == "1200"
            }
            await patch.close()
            try await Self.resume(api, ada, location, bytes, from: 1200)
        }
    }

    /// tus checksum: a checksummed chunk is kept whole and verified, or not at all (FileService rule 3).
    @Test func aCutChecksummedPatchKeepsNothingOfItsChunk() async throws {
        try await TestServer.run { api in
            let (ada, bytes, location) = try await Self.promisedUpload(api)
            let first = try await api.patchUpload(ada, location, offset: 0, Array(bytes[..<1000]))
            #expect(first.headers[TestAPI.uploadOffset] == "1000")
            let digest = Data(TestAPI.sha256(Array(bytes[1000...]))).base64EncodedString()
            let patch = try await Self.cutPatch(
                api, ada, location, headers: "Upload-Offset: 1000\r\nUpload-Checksum: sha256 \(digest)\r\nContent-Length: 2000\r\n\r\n",
                body: Array(bytes[1000..<1800]))  // 800 of the chunk's 2,000 bytes
            // The 400 may come before the cut PATCH has settled what it keeps (423 or 409 meanwhile):
            // the rest from 1,000 goes in once it has, and never would had it kept its 800 bytes.
            try await patch.wait("the cut chunk's answer") { text, _ in text.contains("HTTP/1.1 400") }
            var rest = try await api.patchUpload(ada, location, offset: 1000, Array(bytes[1000...]))
            try await eventually("the rest let in from 1,000") {
                if rest.status != .noContent { rest = try await api.patchUpload(ada, location, offset: 1000, Array(bytes[1000...])) }
                return rest.status == .noContent
            }
            await patch.close()
            #expect(rest.status == .noContent && rest.headers[TestAPI.uploadOffset] == "3000", "\(rest.status)")
            let upload = try await api.request(.get, location, token: ada.token).decode(API.Upload.self)
            #expect(upload.complete && upload.size == 3000)
        }
    }

    /// Ada and her 3,000-byte upload with its sha256 promised: the bytes and the upload's location.
    static func promisedUpload(_ api: TestAPI) async throws -> (Account, [UInt8], String) {
        let ada = try await api.register("ada")
        let bytes = (0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let created = try await api.createUpload(ada, length: bytes.count, name: "cut.bin", promise: TestAPI.sha256(bytes))
        return (ada, bytes, try #require(created.headers[.location]))
    }

    /// A PATCH of `location` (`headers` after its fixed ones) whose client was killed once `body`
    /// went out: a FIN after its last bytes.
    static func cutPatch(_ api: TestAPI, _ account: Account, _ location: String, headers: String, body: [UInt8]) async throws -> RawConnection {
        let patch = try await RawConnection.open(port: api.port)
        try await patch.send(
            "PATCH \(location) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(account.token)\r\nTus-Resumable: 1.0.0\r\n"
                + "Content-Type: application/offset+octet-stream\r\n" + headers)
        try await patch.send(body)
        try await patch.shutdownOutput()
        return patch
    }

    /// The rest of `bytes` from `offset`, and the upload complete: its promised sha256 held, so the
    /// bytes kept are the ones sent.
    static func resume(_ api: TestAPI, _ account: Account, _ location: String, _ bytes: [UInt8], from offset: Int) async throws {
        let rest = try await api.patchUpload(account, location, offset: offset, Array(bytes[offset...]))
        #expect(rest.status == .noContent && rest.headers[TestAPI.uploadOffset] == "3000", "\(rest.status)")
        let upload = try await api.request(.get, location, token: account.token).decode(API.Upload.self)
        #expect(upload.complete && upload.size == 3000)
    }

    static func stagedSizes(_ staging: URL) -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: staging.path)) ?? []
        return names.compactMap { name in
            (try? FileManager.default.attributesOfItem(atPath: staging.appendingPathComponent(name).path))?[.size] as? Int
        }
    }

    @Test func limitsAreClearErrorsAndALiedChecksumRemovesTheUpload() async throws {
        try await TestServer.run(configure: {
            $0.files.maxUploadBytes = 1000
            $0.files.quotaBytes = 1500
            $0.files.uploadsPerMinute = 6
            $0.stopRateLimitClock()
        }) { api in
            let ada = try await api.register("ada")
            let tooLarge = try await api.createUpload(ada, length: 1001)
            #expect(tooLarge.status == .contentTooLarge && tooLarge.errorCode == .uploadTooLarge)
            #expect(try await api.createUpload(ada, length: 1000).status == .created)
            let overQuota = try await api.createUpload(ada, length: 600)
            #expect(overQuota.status == .contentTooLarge && overQuota.errorCode == .quotaExceeded)
            let bytes = [UInt8](repeating: 7, count: 100)
            let lie = try await api.createUpload(ada, length: 100, promise: TestAPI.sha256([1, 2, 3]), body: bytes)
            #expect(lie.status.code == 460 && lie.errorCode == .checksumMismatch)
            let malformed = try await api.request(
                .post, "/v1/uploads", token: ada.token, body: nil,
                headers: [TestAPI.tusResumable: "1.0.0", TestAPI.uploadLength: "10", TestAPI.uploadMetadata: "filename not*base64"])
            #expect(malformed.status == .badRequest && malformed.errorCode == .invalidUpload)
            var limited: APIResponse?
            for _ in 0..<5 {
                let response = try await api.createUpload(ada, length: 1)
                if response.status == .tooManyRequests { limited = response }
            }
            #expect(limited?.errorCode == .rateLimited && limited?.headers[.retryAfter] != nil)
        }
    }

    @Test func filesGoToWhoeverSeesTheirMessageOverSignedLinksWithSafeHeaders() async throws {
        try await TestServer.run { api in
            let (ada, grace, alan) = try await api.threeFriends()
            let eve = try await api.register("eve")
            let group = try await api.request(
                .post, "/v1/groups", token: ada.token, encoding: API.CreateGroupRequest(clientId: .random(), title: "Trip", memberIds: [grace.id, alan.id])
            ).decode(API.GroupActionResponse.self).conversation!.id
            let png = TestFiles.png(width: 64, height: 48)
            let photo = try await api.upload(png, by: ada, name: "beach.png")
            let page = try await api.upload(Array("%PDF-1.7\n<html><script>alert(1)</script>".utf8), by: ada, name: "notes.html")
            #expect(page.kind == .file && page.mimeType == "application/pdf", "the bytes say PDF, whatever the name says")
            let sent = try await api.send("", attaching: [photo.id, page.id], from: ada, in: group)
            #expect(sent.status == .created)
            let message = try sent.decode(API.SendResponse.self).message
            #expect(message.text.isEmpty && message.attachments?.map(\.id) == [photo.id, page.id])
            #expect(message.attachments?.first?.width == 64 && message.attachments?.first?.height == 48)
            func links(_ account: Account) async throws -> [API.FileLink] {
                try await api.request(.post, "/v1/files/links", token: account.token, encoding: API.FileLinksRequest(ids: [photo.id, page.id]))
                    .decode(API.FileLinks.self).links
            }
            #expect(try await links(eve).isEmpty, "a stranger gets no link")
            let graceLinks = try await links(grace)
            #expect(graceLinks.map(\.id) == [photo.id, page.id])
            let image = try await api.request(.get, graceLinks[0].url)
            #expect(image.status == .ok && Array(image.body.readableBytesView) == png)
            #expect(image.headers[.contentType] == "image/png" && image.headers[.contentDisposition]?.hasPrefix("inline") == true)
            #expect(image.headers[.xContentTypeOptions] == "nosniff" && image.headers[.contentSecurityPolicy]?.hasPrefix("sandbox") == true)
            let document = try await api.request(.get, graceLinks[1].url)
            #expect(document.headers[.contentDisposition]?.hasPrefix("attachment") == true, "only the image allowlist shows inline")
            let part = try await api.request(.get, graceLinks[0].url, headers: [.range: "bytes=8-23"])
            #expect(part.status == .partialContent && Array(part.body.readableBytesView) == Array(png[8...23]))
            #expect(part.headers[.contentRange] == "bytes 8-23/\(png.count)")
            let outside = try await api.request(.get, graceLinks[0].url, headers: [.range: "bytes=999999-"])
            #expect(outside.status == .rangeNotSatisfiable)
            let tampered = graceLinks[0].url.replacingOccurrences(of: grace.id.rawValue, with: eve.id.rawValue)
            #expect(try await api.request(.get, tampered).status == .notFound)
            // HEAD answers what GET would, without the bytes (download managers ask for the size).
            let head = try await api.request(.head, graceLinks[0].url)
            #expect(head.status == .ok && head.body.readableBytes == 0 && head.headers[.contentLength] == String(png.count))
            #expect(head.headers[.contentType] == "image/png" && head.headers[.eTag] == image.headers[.eTag])
            let headPart = try await api.request(.head, graceLinks[0].url, headers: [.range: "bytes=8-23"])
            #expect(headPart.status == .partialContent && headPart.headers[.contentLength] == "16" && headPart.body.readableBytes == 0)
            #expect(headPart.headers[.contentRange] == "bytes 8-23/\(png.count)")
            let headTampered = try await api.request(.head, tampered)
            #expect(headTampered.status == .notFound && headTampered.body.readableBytes == 0)
            #expect(try await api.request(.head, "/v1/files/\(photo.id.rawValue)/content", token: eve.token).status == .notFound)
            // Numbers at the edges of 64 bits (an expiry that overflowed once crashed the server).
            let hostile = "/v1/files/\(photo.id.rawValue)/content?user=\(grace.id.rawValue)&expires=-18014398509481985&sig=\(String(repeating: "0", count: 64))"
            #expect(try await api.request(.get, hostile).status == .notFound)
            let everything = try await api.request(.get, graceLinks[0].url, headers: [.range: "bytes=0-9223372036854775807"])
            #expect(everything.status == .partialContent && Array(everything.body.readableBytesView) == png)
            #expect(try await api.request(.get, "/v1/files/\(photo.id.rawValue)/content", token: alan.token).status == .ok, "the bearer token works too")
            // Removed: the link made before stops working, and no new one is made.
            _ = try await api.request(
                .post, "/v1/conversations/\(group.rawValue)/members/\(alan.id.rawValue)/remove", token: ada.token,
                encoding: API.GroupActionRequest(clientId: .random()))
            #expect(try await api.request(.get, "/v1/files/\(photo.id.rawValue)/content", token: alan.token).status == .notFound)
            #expect(try await links(alan).isEmpty)
            // Deleted for everyone: the files go with it.
            let deleted = try await api.request(
                .post, "/v1/conversations/\(group.rawValue)/messages/\(message.seq)/actions", token: ada.token,
                encoding: API.MessageActionBody(clientId: .random(), kind: .delete))
            #expect(deleted.status == .ok)
            #expect(try await api.request(.get, graceLinks[0].url).status == .notFound)
            #expect(try await links(ada).isEmpty)
        }
    }

    /// FileService rule 8: whoever downloads a photo, as an attachment or as a profile photo with no
    /// token, gets it without the place it was taken, whatever client sent it.
    @Test func aPhotosPlaceReachesNoOneThroughAMessageOrAProfile() async throws {
        try await TestServer.run { api in
            let ada = try await api.register("ada"), grace = try await api.register("grace")
            let png = TestFiles.png(width: 64, height: 48)
            let text = Array("tEXtLocation\0GPS 48.8584N 2.2945E".utf8)
            let photo = Array(png.dropLast(12)) + TestFiles.be32(text.count - 4) + text + TestFiles.be32(Int(TestFiles.crc32(text))) + png.suffix(12)
            let upload = try await api.upload(photo, by: ada, name: "eiffel.png")  // promising the sent bytes' sha256
            #expect(upload.kind == .image && upload.width == 64 && upload.height == 48)
            let chat = ConversationID.direct(ada.id, grace.id)
            _ = try await api.send("hi", from: ada, to: grace)
            #expect(try await api.send("", attaching: [upload.id], from: ada, in: chat).status == .created)
            let link = try #require(
                try await api.request(.post, "/v1/files/links", token: grace.token, encoding: API.FileLinksRequest(ids: [upload.id]))
                    .decode(API.FileLinks.self).links.first)
            let received = Array(try await api.request(.get, link.url).body.readableBytesView)
            // An upload is a message's or a profile's: the same photo again for her profile.
            let again = try await api.upload(photo, by: ada, name: "me.png")
            let set = try await api.request(.put, "/v1/me/photo", token: ada.token, encoding: API.PhotoRequest(uploadId: again.id))
            let profile = Array(try await api.request(.get, try #require(try set.decode(User.self).photo)).body.readableBytesView)
            for bytes in [received, profile] {
                #expect(bytes.count == photo.count && Array(bytes.prefix(png.count - 12)) == Array(png.dropLast(12)), "the same image")
                #expect(String(decoding: bytes, as: UTF8.self).contains("48.8584") == false, "not where it was taken")
            }
            // Sent as a file, as it was (`original`): every byte stays.
            let metadata = TestAPI.metadata(name: "eiffel.png", sha256: TestAPI.sha256(photo)) + ",original"
            let original = try await api.request(
                .post, "/v1/uploads", token: ada.token, body: ByteBuffer(bytes: photo),
                headers: [
                    TestAPI.tusResumable: "1.0.0", TestAPI.uploadLength: String(photo.count), TestAPI.uploadMetadata: metadata,
                    .contentType: "application/offset+octet-stream",
                ]
            ).decode(API.Upload.self)
            #expect(try await api.send("", attaching: [original.id], from: ada, in: chat).status == .created)
            let asFile = try #require(
                try await api.request(.post, "/v1/files/links", token: grace.token, encoding: API.FileLinksRequest(ids: [original.id]))
                    .decode(API.FileLinks.self).links.first)
            #expect(Array(try await api.request(.get, asFile.url).body.readableBytesView) == photo)
        }
    }

    @Test func aSendRefusesAttachmentsThatAreNotCompleteUploadsOfTheSender() async throws {
        try await TestServer.run { api in
            let ada = try await api.register("ada"), grace = try await api.register("grace")
            let chat = try await api.send("hi", from: ada, to: grace).conversationId
            let mine = try await api.upload(TestFiles.png(width: 2, height: 2), by: ada)
            let unfinished = try await api.createUpload(ada, length: 10).decode(API.Upload.self)
            for (uploads, sender) in [([unfinished.id], ada), ([mine.id], grace), ([UploadID.random()], ada), ([mine.id, mine.id], ada)] {
                let response = try await api.send("look", attaching: uploads, from: sender, in: chat)
                #expect(response.status == .conflict && response.errorCode == .invalidAttachment)
            }
            let badThumbnail = try await api.request(
                .post, "/v1/messages", token: ada.token,
                encoding: SendRequest(
                    clientId: .random(), conversationId: chat, text: "",
                    attachments: [AttachmentRequest(uploadId: mine.id, thumbnail: Data("<svg onload=alert(1)>".utf8).base64EncodedString())]))
            #expect(badThumbnail.errorCode == .invalidAttachment)
            // A few hundred bytes of PNG may promise any size: a thumbnail is at most 512 px a side.
            func thumbnailed(_ png: [UInt8]) async throws -> APIResponse {
                try await api.request(
                    .post, "/v1/messages", token: ada.token,
                    encoding: SendRequest(
                        clientId: .random(), conversationId: chat, text: "",
                        attachments: [AttachmentRequest(uploadId: mine.id, thumbnail: Data(png).base64EncodedString())]))
            }
            let bomb = try await thumbnailed(TestFiles.png(width: 9_500, height: 1))
            #expect(try bomb.errorCode == .invalidAttachment && bomb.decode(ErrorBody.self).error.message.contains("512"))
            #expect(try await thumbnailed(TestFiles.png(width: 513, height: 2)).errorCode == .invalidAttachment)
            let empty = try await api.request(
                .post, "/v1/messages", token: ada.token, encoding: SendRequest(clientId: .random(), conversationId: chat, text: " "))
            #expect(empty.errorCode == .textEmpty, "no caption and no attachment")
            #expect(try await api.send(" ", attaching: [mine.id], from: ada, in: chat).status == .created)
            // Only invisible characters: refused alone, no caption beside a file.
            let zeroWidth = try await api.request(
                .post, "/v1/messages", token: ada.token, encoding: SendRequest(clientId: .random(), conversationId: chat, text: "\u{200B}\u{3164}"))
            #expect(zeroWidth.errorCode == .textEmpty)
            let another = try await api.upload(TestFiles.png(width: 2, height: 2), by: ada)
            let captioned = try await api.send("\u{200B}\u{3164}", attaching: [another.id], from: ada, in: chat)
            #expect(try captioned.status == .created && captioned.decode(API.SendResponse.self).message.text == "")
        }
    }
}

@Suite struct EmptyUploadTests {
    @Test func anEmptyFileIsCompleteAtCreation() async throws {
        try await TestServer.run { api in
            let ada = try await api.register("ada")
            let created = try await api.createUpload(ada, length: 0)
            #expect(created.status == .created)
            let upload = try created.decode(API.Upload.self)
            #expect(upload.complete && upload.size == 0 && upload.kind == .file)
        }
    }
}

/// The same upload, message and read through a server whose files are in an S3-compatible service (moto).
@Suite struct S3FileServerTests {
    @Test func aFileUploadedToAnS3StoreIsServedToTheOtherMember() async throws {
        let moto = try await MotoTestServer.shared()
        let escaped = { (value: String) in value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
        let location =
            "s3://parley-\(UUID().uuidString.lowercased())?endpoint=\(moto.url)&region=us-east-1&path-style=true"
            + "&access-key=\(escaped(moto.accessKey))&secret-key=\(escaped(moto.secretKey))"
        try await S3BlobStore(location: try S3Location(location, environment: [:])).createBucket()
        try await TestServer.run(configure: { $0.files.blobStore = location }) { api in
            let ada = try await api.register("ada"), grace = try await api.register("grace")
            let chat = try await api.send("hi", from: ada, to: grace).conversationId
            let png = TestFiles.png(width: 40, height: 30)
            let created = try await api.createUpload(ada, length: png.count, promise: TestAPI.sha256(png))
            let location = try #require(created.headers[.location])
            _ = try await api.patchUpload(ada, location, offset: 0, Array(png[..<100]))
            _ = try await api.patchUpload(ada, location, offset: 100, Array(png[100...]))
            let upload = try await api.request(.get, location, token: ada.token).decode(API.Upload.self)
            #expect(upload.complete && upload.width == 40 && upload.height == 30)
            #expect(try await api.send("", attaching: [upload.id], from: ada, in: chat).status == .created)
            let content = try await api.request(.get, "/v1/files/\(upload.id.rawValue)/content", token: grace.token)
            #expect(content.status == .ok && Array(content.body.readableBytesView) == png)
            // A cached copy is revalidated (RFC 9110: a weak tag, a list, or any).
            let etag = try #require(content.headers[.eTag])
            for condition in [etag, "W/" + etag, "\"other\", " + etag, "*"] {
                let cached = try await api.request(.get, "/v1/files/\(upload.id.rawValue)/content", token: grace.token, headers: [.ifNoneMatch: condition])
                #expect(cached.status == .notModified, "If-None-Match: \(condition)")
            }
            let changed = try await api.request(.get, "/v1/files/\(upload.id.rawValue)/content", token: grace.token, headers: [.ifNoneMatch: "\"other\""])
            #expect(changed.status == .ok)
        }
    }
}
