import HTTPTypes
import Hummingbird
import Logging
import ParleyCore
import ParleyFiles
import ParleyStore

/// Profile photos (docs/protocol.md "Files"): set and remove mine, and serve anyone's current one.
///
/// Rules (``ProfilePhotoRouteTests``; the store's in ``ProfilePhotoStore``):
/// 1. A photo is a complete JPEG, PNG, GIF or WebP upload of mine that no message carries; anything
///    else is `400 invalid_attachment` saying what is wrong with it.
/// 2. `GET /v1/photos/{id}` needs no token: `<img src>` loads it, and only people who see the user
///    learn the path. It answers while the upload is someone's current photo (else `404
///    file_not_found`), with the same safe headers as any file, cached for good (the path changes
///    with the photo).
/// 3. Once a change is committed, everyone who sees the user is told live: a `profile` frame with
///    the user as now goes through the hub (every node) to their peers (``ProfilePhotoStore/peers(of:)``)
///    and to their own connections (their other devices). It is ephemeral: a client offline then
///    sees the photo in what it loads. A failure to tell is logged; the change stands and is answered.
struct PhotoRoutes {
    let files: FileService
    let hub: ConnectionHub
    let logger: Logger

    static let cacheControl = "public, max-age=31536000, immutable"

    func add(to router: Router<ParleyRequestContext>) {
        router.put("/v1/me/photo") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.PhotoRequest.self, from: request, context: context)
            let id = try await photo(body.uploadId, of: me)
            let user = try await files.store.setPhoto(of: me, upload: id, now: .now())
            await announce(user)
            return try JSONBody.response(user)
        }
        router.delete("/v1/me/photo") { _, context in
            let me = try context.requireUser()
            await announce(try await files.store.setPhoto(of: me, upload: nil, now: .now()))
            return Response(status: .noContent)
        }
        router.getAndHead("/v1/photos/:id") { request, context, headOnly in
            guard let raw = context.parameters.get("id"), let id = UploadID(validating: raw),
                let access = try await files.store.photoAccess(id), let key = BlobKey(sha256: access.blob)
            else { throw FileRoutes.notFound }
            var response = try await FileResponse.make(
                access, key: key, blobs: files.blobs, request: request, download: false, maxAge: 0, headOnly: headOnly)
            response.headers[.cacheControl] = Self.cacheControl
            return response
        }
    }

    /// Rule 1, with a message for each way it fails; the store checks it again as it claims the upload.
    func photo(_ raw: UploadID, of me: UserID) async throws -> UploadID {
        guard let id = UploadID(validating: raw.rawValue) else { throw Self.invalid("uploadId must be a UUID.") }
        guard let upload = try await files.store.upload(id, owner: me) else {
            throw Self.invalid("uploadId is not an upload of yours (an upload expires after a day unless used).")
        }
        guard let reading = upload.reading else { throw Self.invalid("That upload is not complete: send the rest of its bytes first.") }
        guard reading.kind == .image else { throw Self.invalid("A profile photo must be a JPEG, PNG, GIF or WebP image.") }
        let side = Attachments.maxProfilePhotoSide
        guard let width = reading.width, let height = reading.height, width <= side, height <= side else {
            throw Self.invalid("A profile photo is at most \(side) × \(side) pixels: crop or scale it first.")
        }
        guard upload.conversationId == nil else { throw Self.invalid("That upload is part of a message; upload the photo again.") }
        return id
    }

    /// Rule 3: tells the user's peers, and the user's own connections, who they are now.
    func announce(_ user: User) async {
        await ProfileAnnouncer(store: files.store, hub: hub, logger: logger).announce(user)
    }

    static func invalid(_ message: String) -> ParleyError { ParleyError(.invalidAttachment, message) }
}
