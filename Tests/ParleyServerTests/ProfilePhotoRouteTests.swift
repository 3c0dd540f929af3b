import Foundation
import HTTPTypes
import NIOCore
import ParleyCore
import Testing

/// Profile photos over HTTP (docs/protocol.md "Files", ``PhotoRoutes``' rules); every answer is held to openapi.yaml.
@Suite struct ProfilePhotoRouteTests {
    @Test func aPhotoIsSetReplacedAndRemovedAndLoadsWithoutATokenOnlyWhileCurrent() async throws {
        try await TestServer.run { api in
            let (ada, grace, alan) = try await api.threeFriends()
            let png = TestFiles.png(width: 64, height: 64)
            let first = try await api.upload(png, by: ada, name: "me.png")
            let set = try await api.request(.put, "/v1/me/photo", token: ada.token, encoding: API.PhotoRequest(uploadId: first.id))
            #expect(set.status == .ok)
            let path = try #require(try set.decode(User.self).photo)
            #expect(path == "/v1/photos/\(first.id.rawValue)")
            #expect(try await api.request(.get, "/v1/me", token: ada.token).decode(User.self).photo == path)
            // No token (an <img>), and a stale one is no obstacle either.
            for token in [nil, "not-a-session"] {
                let photo = try await api.request(.get, path, token: token)
                #expect(photo.status == .ok && Array(photo.body.readableBytesView) == png)
                #expect(photo.headers[.contentType] == "image/png" && photo.headers[.contentDisposition]?.hasPrefix("inline") == true)
                #expect(photo.headers[.xContentTypeOptions] == "nosniff" && photo.headers[.contentSecurityPolicy]?.hasPrefix("sandbox") == true)
                #expect(photo.headers[.cacheControl] == "public, max-age=31536000, immutable")
            }
            let head = try await api.request(.head, path)
            #expect(head.status == .ok && head.body.readableBytes == 0 && head.headers[.contentLength] == String(png.count))
            #expect(head.headers[.cacheControl] == "public, max-age=31536000, immutable")
            // Others see it on my user and among a conversation's members.
            #expect(try await api.request(.get, "/v1/users/\(ada.id.rawValue)", token: grace.token).decode(User.self).photo == path)
            let found = try await api.request(.get, "/v1/users?query=ada", token: grace.token).decode(API.UserList.self).users
            #expect(found.first { $0.id == ada.id }?.photo == path)
            let direct = try await api.conversations(of: grace).first { $0.kind == .direct }
            #expect(direct?.members.first { $0.userId == ada.id }?.photo == path)
            #expect(direct?.members.first { $0.userId == grace.id }?.photo == nil)
            let group = try await api.createGroup(by: ada, title: "Trip", members: [grace, alan]).conversation
            let members = try await api.request(.get, "/v1/conversations/\(try #require(group?.id).rawValue)", token: alan.token)
                .decode(ConversationSummary.self).members
            #expect(members.first { $0.userId == ada.id }?.photo == path)
            // The photo holds its upload: no message takes it, tus cannot remove it.
            let chat = try #require(direct?.id)
            let attached = try await api.send("", attaching: [first.id], from: ada, in: chat)
            #expect(attached.status == .conflict && attached.errorCode == .invalidAttachment)
            let terminated = try await api.request(.delete, "/v1/uploads/\(first.id.rawValue)", token: ada.token, headers: [TestAPI.tusResumable: "1.0.0"])
            #expect(terminated.status == .conflict && terminated.errorCode == .uploadAttached)
            // Replaced: a new path; the old one is gone.
            let second = try await api.upload(TestFiles.png(width: 32, height: 32), by: ada)
            let replaced = try await api.request(.put, "/v1/me/photo", token: ada.token, encoding: API.PhotoRequest(uploadId: second.id))
            let newPath = try #require(try replaced.decode(User.self).photo)
            #expect(newPath != path && newPath == "/v1/photos/\(second.id.rawValue)")
            let old = try await api.request(.get, path)
            #expect(old.status == .notFound && old.errorCode == .fileNotFound)
            #expect(try await api.request(.head, path).status == .notFound)
            #expect(try await api.request(.get, newPath).status == .ok)
            #expect(try await api.request(.get, "/v1/uploads/\(first.id.rawValue)", token: ada.token).status == .notFound, "the old upload went")
            // Removed.
            #expect(try await api.request(.delete, "/v1/me/photo", token: ada.token).status == .noContent)
            #expect(try await api.request(.get, "/v1/me", token: ada.token).decode(User.self).photo == nil)
            #expect(try await api.request(.get, "/v1/users/\(ada.id.rawValue)", token: grace.token).decode(User.self).photo == nil)
            #expect(try await api.request(.get, newPath).errorCode == .fileNotFound)
            #expect(try await api.request(.delete, "/v1/me/photo", token: ada.token).status == .noContent, "none to remove is fine")
        }
    }

    @Test func onlyACompleteImageUploadOfMineBecomesMyPhoto() async throws {
        try await TestServer.run { api in
            let ada = try await api.register("ada"), grace = try await api.register("grace")
            func put(_ id: UploadID, by account: Account = ada) async throws -> APIResponse {
                try await api.request(.put, "/v1/me/photo", token: account.token, encoding: API.PhotoRequest(uploadId: id))
            }
            let document = try await api.upload(Array("%PDF-1.7\n".utf8), by: ada, name: "cv.pdf")
            let notImage = try await put(document.id)
            #expect(notImage.status == .badRequest && notImage.errorCode == .invalidAttachment)
            #expect(try notImage.decode(ErrorBody.self).error.message.contains("image"))
            let unfinished = try await api.createUpload(ada, length: 10).decode(API.Upload.self)
            #expect(try await put(unfinished.id).errorCode == .invalidAttachment)
            let hers = try await api.upload(TestFiles.png(width: 2, height: 2), by: grace)
            #expect(try await put(hers.id).errorCode == .invalidAttachment)
            #expect(try await put(.random()).errorCode == .invalidAttachment)
            let huge = try await api.upload(TestFiles.png(width: 4_097, height: 1), by: ada)
            let tooBig = try await put(huge.id)
            #expect(try tooBig.errorCode == .invalidAttachment && tooBig.decode(ErrorBody.self).error.message.contains("4096 × 4096"))
            let malformed = try await api.request(.put, "/v1/me/photo", token: ada.token, json: #"{"uploadId":"photo.png"}"#)
            #expect(malformed.status == .badRequest && malformed.errorCode == .invalidAttachment)
            #expect(try await put(hers.id, by: grace).status == .ok)
            #expect(try await put(hers.id).errorCode == .invalidAttachment, "someone else's photo")
            let anonymous = try await api.request(.put, "/v1/me/photo", json: #"{"uploadId":"\#(hers.id.rawValue)"}"#)
            #expect(anonymous.status == .unauthorized)
            #expect(try await api.request(.get, "/v1/me", token: ada.token).decode(User.self).photo == nil)
            #expect(try await api.request(.get, "/v1/photos/not-an-id").errorCode == .fileNotFound)
            #expect(try await api.request(.get, "/v1/photos/\(document.id.rawValue)").errorCode == .fileNotFound, "an upload, not a photo")
        }
    }
}
