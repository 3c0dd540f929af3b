import Hummingbird
import ParleyCore
import ParleyStore

/// Reads `Authorization: Bearer <token>` and sets the request's user when the session is valid.
/// Routes that need a user call ``ParleyRequestContext/requireUser()``.
///
/// A header that does not sign in (malformed, or a logged-out or expired session, or a store that
/// cannot be asked) fails only the routes that need a user: register, login, health, readiness and
/// profile photos (``PhotoRoutes``: an `<img>` sends no token) ignore it, so a client still sending
/// its old header can sign in again and a probe with one still sees the server up. The failure is
/// kept in the context and ``requireUser()`` throws it.
struct TokenAuthenticator: RouterMiddleware {
    let store: any ParleyStore

    func handle(
        _ request: Request, context: ParleyRequestContext,
        next: (Request, ParleyRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        if let header = request.headers[.authorization], request.uri.path != OperationsRoutes.metricsPath {
            do {
                guard let token = SessionTokens.bearerCredentials(header), SessionTokens.isWellFormed(token)
                else { throw ParleyError(.unauthorized, "The Authorization header must be 'Bearer <token>'.") }
                let hash = SessionTokens.hash(token)
                guard let user = try await store.session(tokenHash: hash, now: .now())?.user else {
                    throw ParleyError(.unauthorized, "The session has expired or was revoked. Sign in again.")
                }
                context.userId = user
                context.tokenHash = hash
            } catch {
                context.authenticationFailure = error
            }
        }
        return try await next(request, context)
    }
}
