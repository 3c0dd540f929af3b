import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ParleyCore
import ParleyStore

/// tus 1.0 at `/v1/uploads` (docs/protocol.md "Files"): core, creation, creation-with-upload,
/// termination, checksum (sha256) and expiration. Every answer carries `Tus-Resumable`.
struct UploadRoutes {
    let files: FileService

    func add(to router: Router<ParleyRequestContext>) {
        let uploads = router.group("/v1/uploads").add(middleware: TusAnswerMiddleware())
        uploads.on("", method: .options) { _, _ in
            var headers = HTTPFields()
            headers[TusHeaders.tusVersion] = TusHeaders.version
            headers[TusHeaders.tusExtension] = TusHeaders.extensions
            headers[TusHeaders.tusMaxSize] = String(files.configuration.maxUploadBytes)
            headers[TusHeaders.tusChecksumAlgorithm] = ChunkChecksum.offered
            return Response(status: .noContent, headers: headers)
        }
        uploads.post("") { request, context in
            let me = try context.requireUser()
            try TusHeaders.requireVersion(request.headers)
            guard request.headers[TusHeaders.uploadDeferLength] == nil, let length = try TusHeaders.integer(request.headers, TusHeaders.uploadLength) else {
                throw ParleyError(.invalidUpload, "Say the file's size in 'Upload-Length' (deferred lengths are not supported).")
            }
            let metadata = try TusHeaders.metadata(request.headers[TusHeaders.uploadMetadata])
            let now = Timestamp.now()
            var upload: StoredUpload
            var offset: Int64 = 0
            if request.headers[.contentType].map(Self.isOffsetStream) == true {
                // creation-with-upload: the first bytes (or all of them) in the same request,
                // recorded once they are in (FileService rule 7). If they fail (too many, a
                // checksum, a connection that ended: HTTPRequestGuard rule 3), the answer carries
                // no Location: an upload the client never learns of would only hold its quota, so
                // it goes. A body shorter than its Content-Length is a cut one too.
                let declared = request.headers[.contentLength].flatMap { Int64($0) }
                let checksum = try ChunkChecksum(request.headers)
                let planned = try files.plan(owner: me, length: length, metadata: metadata, now: now)
                try await files.reserve(planned)
                defer { files.release(planned) }
                do {
                    (upload, offset) = try await files.append(
                        planned, at: 0, checksum: checksum, body: request.body, now: now, recording: { try await files.record(planned, now: now) },
                        cut: Self.cutShort)
                    if let declared, offset < declared { throw Self.cutShort }
                } catch {
                    await files.abandon(planned.id, owner: me)
                    throw error
                }
            } else {
                upload = try await files.create(owner: me, length: length, metadata: metadata, now: now)
                if length == 0 { upload = try await files.complete(upload, now: now) }
            }
            var headers = HTTPFields()
            headers[.location] = "/v1/uploads/\(upload.id.rawValue)"
            headers[TusHeaders.uploadOffset] = String(offset)
            headers[TusHeaders.uploadExpires] = TusHeaders.httpDate(upload.expiresAt)
            headers[.contentType] = "application/json; charset=utf-8"
            let body = try WireFormat.encoder().encode(Self.info(upload, offset: offset))
            return Response(status: .created, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        uploads.head(":id") { request, context in
            let me = try context.requireUser()
            try TusHeaders.requireVersion(request.headers)
            let (upload, offset) = try await files.find(try Self.id(context), owner: me)
            var headers = HTTPFields()
            headers[TusHeaders.uploadOffset] = String(offset)
            headers[TusHeaders.uploadLength] = String(upload.length)
            headers[TusHeaders.uploadExpires] = TusHeaders.httpDate(upload.expiresAt)
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers)
        }
        uploads.patch(":id") { request, context in
            let me = try context.requireUser()
            try TusHeaders.requireVersion(request.headers)
            guard request.headers[.contentType].map(Self.isOffsetStream) == true else {
                throw ParleyError(.unsupportedMediaType, "Send the bytes as 'Content-Type: \(TusHeaders.offsetContentType)'.")
            }
            guard let offset = try TusHeaders.integer(request.headers, TusHeaders.uploadOffset) else {
                throw ParleyError(.invalidUpload, "Say where the bytes go in 'Upload-Offset'.")
            }
            let (upload, stored) = try await files.find(try Self.id(context), owner: me)
            let checksum = try ChunkChecksum(request.headers)
            guard offset == stored else { throw FileService.mismatch(stored) }
            let (_, reached) = try await files.append(upload, at: offset, checksum: checksum, body: request.body, now: .now())
            var headers = HTTPFields()
            headers[TusHeaders.uploadOffset] = String(reached)
            headers[TusHeaders.uploadExpires] = TusHeaders.httpDate(upload.expiresAt)
            return Response(status: .noContent, headers: headers)
        }
        uploads.delete(":id") { request, context in
            let me = try context.requireUser()
            try TusHeaders.requireVersion(request.headers)
            try await files.terminate(try Self.id(context), owner: me)
            return Response(status: .noContent)
        }
        uploads.get(":id") { _, context in
            let me = try context.requireUser()
            let (upload, offset) = try await files.find(try Self.id(context), owner: me)
            return try JSONBody.response(Self.info(upload, offset: offset))
        }
    }

    static func id(_ context: ParleyRequestContext) throws -> UploadID {
        guard let raw = context.parameters.get("id"), let id = UploadID(validating: raw) else {
            throw ParleyError(.uploadNotFound, "No such upload.")
        }
        return id
    }

    /// A body whose connection ended before it was whole: the client went away.
    static let cutShort = ParleyError(.invalidUpload, "The request's body ended before it was whole; nothing was kept.")

    static func isOffsetStream(_ contentType: String) -> Bool {
        contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() == TusHeaders.offsetContentType
    }

    static func info(_ upload: StoredUpload, offset: Int64) -> API.Upload {
        API.Upload(
            id: upload.id, name: upload.name, size: upload.length, offset: offset, complete: upload.reading != nil,
            mimeType: upload.reading?.mimeType, kind: upload.reading?.kind, width: upload.reading?.width, height: upload.reading?.height,
            expiresAt: upload.expiresAt)
    }
}

/// Adds `Tus-Resumable` to every answer of the upload routes, errors included (tus requires it).
struct TusAnswerMiddleware: RouterMiddleware {
    func handle(_ request: Request, context: ParleyRequestContext, next: (Request, ParleyRequestContext) async throws -> Response) async throws
        -> Response
    {
        do {
            var response = try await next(request, context)
            response.headers[TusHeaders.tusResumable] = TusHeaders.version
            return response
        } catch {
            guard var known = ParleyError.from(error) else { throw error }
            known.headers[TusHeaders.tusResumable] = TusHeaders.version
            throw known
        }
    }
}
