import Hummingbird
import ParleyCore
import ParleyStore

/// Reads `Authorization: Bearer <token>` and sets the request's user when the session is valid.
/// Routes that need a user call ``ParleyRequestContext/requireUser()``.
struct TokenAuthenticator: RouterMiddleware {
    let store: any ParleyStore

    func handle(
        _ request: Request, context: ParleyRequestContext,
        next: (Request, ParleyRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        if let header = request.headers[.authorization], request.uri.path != OperationsRoutes.metricsPath {
            guard header.hasPrefix("Bearer "), case let token = String(header.dropFirst(7)), SessionTokens.isWellFormed(token)
            else { throw ParleyError(.unauthorized, "The Authorization header must be 'Bearer <token>'.") }
            let hash = SessionTokens.hash(token)
            guard let user = try await store.session(tokenHash: hash, now: .now())?.user else {
                throw ParleyError(.unauthorized, "The session has expired or was revoked. Sign in again.")
            }
            context.userId = user
            context.tokenHash = hash
        }
        return try await next(request, context)
    }
}
