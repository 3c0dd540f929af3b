import Foundation
import Hummingbird
import ParleyCore

/// Stands before the static file middleware and refuses paths it should never be asked to serve:
/// a NUL (`/favicon.svg%00.html` would be opened as `favicon.svg` but typed as HTML), empty
/// segments (`//js` would redirect to the protocol-relative `//js/`, another host), dot segments,
/// and anything whose real location, after following symbolic links, is outside the public folder.
struct StaticPathGuard<Context: RequestContext>: RouterMiddleware {
    let root: String

    init(publicDirectory: String) {
        root = URL(fileURLWithPath: publicDirectory).standardizedFileURL.resolvingSymlinksInPath().path
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard path.hasPrefix("/v1/") || isServable(path) else { throw ParleyError(.notFound, "No such file.") }
        return try await next(request, context)
    }

    func isServable(_ path: String) -> Bool {
        let decoded = path.removingPercentEncoding ?? path
        guard !decoded.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }), !decoded.contains("\\") else { return false }
        let segments = decoded.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard path.hasPrefix("/"), !segments.dropLast().contains(where: \.isEmpty),
            !segments.contains(where: { $0 == "." || $0 == ".." })
        else { return false }
        let real = URL(fileURLWithPath: root + decoded).resolvingSymlinksInPath().path
        return real == root || real.hasPrefix(root + "/")
    }
}

/// The web client's files, for every path but the API's: Hummingbird's `FileMiddleware` answers a
/// path with `..` in it with a bare 400 before any route is tried, which would make
/// `/v1/conversations/a..b` a malformed request instead of an unknown conversation.
struct WebClientFiles<Context: RequestContext>: RouterMiddleware {
    let files: FileMiddleware<Context, LocalFileSystem>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.path.hasPrefix("/v1/") { return try await next(request, context) }
        return try await files.handle(request, context: context, next: next)
    }
}
