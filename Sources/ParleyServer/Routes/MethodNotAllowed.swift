import HTTPTypes
import Hummingbird
import ParleyCore
import Synchronization

/// The methods each route path takes, filled in once the routes are registered.
final class RouteMethods: Sendable {
    private struct Route {
        var segments: [Substring]
        var methods: [HTTPRequest.Method]
    }

    private let routes = Mutex<[Route]>([])

    /// Records the routes of a built router (path patterns with `{name}` parameters).
    func record(_ paths: [(path: String, method: HTTPRequest.Method)]) {
        var byPath: [String: [HTTPRequest.Method]] = [:]
        for (path, method) in paths { byPath[path, default: []].append(method) }
        routes.withLock { routes in
            routes = byPath.map { Route(segments: $0.key.split(separator: "/"), methods: $0.value.sorted { $0.rawValue < $1.rawValue }) }
        }
    }

    /// The methods `path` takes, or `nil` when no route has this path: those of every pattern it
    /// matches (`/v1/files/links` is a literal route and also matches `/v1/files/{id}`).
    func methods(for path: String) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/")
        let matching = routes.withLock { routes in
            routes.filter { route in
                route.segments.count == segments.count
                    && zip(route.segments, segments).allSatisfy { pattern, segment in pattern.hasPrefix("{") || pattern.hasPrefix(":") || pattern == segment }
            }
        }
        guard !matching.isEmpty else { return nil }
        return Array(Set(matching.flatMap(\.methods))).sorted { $0.rawValue < $1.rawValue }
    }
}

/// Answers `405 Method Not Allowed` with `Allow` for a known path asked with another method
/// (instead of a misleading 404).
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteMethods

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let methods = routes.methods(for: request.uri.path), !methods.contains(request.method) {
            var error = ParleyError(.methodNotAllowed, "This route takes \(methods.map(\.rawValue).joined(separator: ", ")).")
            error.allow = methods
            throw error
        }
        return try await next(request, context)
    }
}
