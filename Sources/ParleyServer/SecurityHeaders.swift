import HTTPTypes
import Hummingbird

/// Security headers on every response. The Content-Security-Policy allows only this origin's own
/// scripts, styles and sockets: no inline script, no plugins, no framing. Images and media may also
/// come from `blob:` URLs (the previews of files being attached).
enum SecurityHeaders {
    static var contentSecurityPolicy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; font-src 'self'; "
            + "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    }

    static let headers: [HTTPField] = [
        ("Content-Security-Policy", contentSecurityPolicy),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
        ("Permissions-Policy", "camera=(), microphone=(), geolocation=()"),
    ].compactMap { name, value in HTTPField.Name(name).map { HTTPField(name: $0, value: value) } }
}

struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        // A route that set its own policy or caching keeps it (files: `sandbox`, cached while their link lasts).
        for field in SecurityHeaders.headers where response.headers[field.name] == nil { response.headers[field.name] = field.value }
        if request.uri.path.hasPrefix("/v1/"), response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}
