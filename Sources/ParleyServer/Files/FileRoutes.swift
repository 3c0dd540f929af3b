import HTTPTypes
import Hummingbird
import NIOCore
import ParleyCore
import ParleyFiles
import ParleyStore

/// Reading files (docs/protocol.md "Files"): signed links, and the bytes to whoever can see the
/// message carrying them, checked at every request.
struct FileRoutes {
    let files: FileService

    func add(to router: Router<ParleyRequestContext>) {
        router.post("/v1/files/links") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.FileLinksRequest.self, from: request, context: context)
            guard body.ids.count <= API.maxFileLinks else { throw ParleyError(.invalidJSON, "Ask for at most \(API.maxFileLinks) links at once.") }
            guard body.ids.allSatisfy({ UploadID(validating: $0.rawValue) != nil }) else {
                throw ParleyError(.invalidJSON, "ids are attachment ids (UUIDs).")
            }
            let now = Timestamp.now()
            var links: [API.FileLink] = []
            var seen: Set<UploadID> = []
            for raw in body.ids {
                guard let id = UploadID(validating: raw.rawValue), seen.insert(id).inserted, try await files.store.fileAccess(id, for: me) != nil
                else { continue }
                let link = files.links.link(id, for: me, now: now)
                links.append(API.FileLink(id: id, url: link.path, expiresAt: link.expiresAt))
            }
            return try JSONBody.response(API.FileLinks(links: links))
        }
        router.getAndHead("/v1/files/:id/content") { request, context, headOnly in
            guard let raw = context.parameters.get("id"), let id = UploadID(validating: raw) else { throw Self.notFound }
            let query = request.uri.queryParameters
            let user: UserID
            if query["sig"] != nil {
                guard
                    let signed = files.links.verify(
                        id, user: query["user"].map(String.init), expires: query["expires"].map(String.init),
                        signature: query["sig"].map(String.init), now: .now())
                else { throw Self.notFound }
                user = signed
            } else {
                user = try context.requireUser()
            }
            guard let access = try await files.store.fileAccess(id, for: user), let key = BlobKey(sha256: access.blob) else { throw Self.notFound }
            return try await FileResponse.make(
                access, key: key, blobs: files.blobs, request: request, download: query["download"] == "1",
                maxAge: query["sig"] != nil ? Int(files.configuration.linkLifetimeSeconds) : 0, headOnly: headOnly)
        }
    }

    static let notFound = ParleyError(.fileNotFound, "No such file.")
}

extension Router where Context == ParleyRequestContext {
    /// `GET` and `HEAD` on `path` (download managers and link previews ask `HEAD` for the size and
    /// type): `HEAD` answers what `GET` would, status and headers, without a body, an error's too.
    func getAndHead(
        _ path: RouterPath, _ handler: @escaping @Sendable (Request, ParleyRequestContext, _ headOnly: Bool) async throws -> Response
    ) {
        get(path) { request, context in try await handler(request, context, false) }
        head(path) { request, context in
            do {
                return try await handler(request, context, true)
            } catch let error as ParleyError {
                var headers = try error.response(from: request, context: context).headers
                headers[.contentLength] = nil
                return Response(status: error.status, headers: headers)
            }
        }
    }
}
