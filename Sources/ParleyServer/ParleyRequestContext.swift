import HTTPTypes
import Hummingbird
import NIOCore
import ParleyCore

/// Per-request state: the authenticated user (set by ``TokenAuthenticator``) and the client address.
public struct ParleyRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The session's user; `nil` until authenticated.
    public var userId: UserID?
    /// SHA-256 of the bearer token, kept so logout can revoke exactly this session.
    public var tokenHash: String?
    /// Why the request's `Authorization` header did not sign in, thrown by ``requireUser()``.
    var authenticationFailure: (any Error)?
    public var maxUploadSize: Int

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.maxUploadSize = ServerLimits.maxBodyBytes
        self.clientAddress = source.channel.remoteAddress?.ipAddress
    }

    /// The authenticated user, or a 401.
    func requireUser() throws -> UserID {
        if let authenticationFailure { throw authenticationFailure }
        guard let userId else { throw ParleyError(.unauthorized, "Sign in first.") }
        return userId
    }

    /// The client's address: the peer's, or, through a trusted proxy, the one it forwarded
    /// (``ClientAddressMiddleware``).
    public var clientAddress: String?

    /// Address used to key throttles; unknown addresses share one key.
    var clientKey: String { clientAddress ?? "unknown" }
}

/// Fixed size limits. A 10,000-character message escaped in JSON stays well below them.
public enum ServerLimits {
    /// Largest accepted REST body and WebSocket frame, in bytes.
    public static let maxBodyBytes = 256 * 1024
}

/// Sets ``ParleyRequestContext/clientAddress`` from the forwarding headers when the peer is a
/// trusted proxy (rules in ``TrustedProxies``).
struct ClientAddressMiddleware: RouterMiddleware {
    let trustedProxies: TrustedProxies
    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")
    private static let forwarded = HTTPField.Name("Forwarded")

    func handle(
        _ request: Request, context: ParleyRequestContext, next: (Request, ParleyRequestContext) async throws -> Response
    ) async throws -> Response {
        guard !trustedProxies.networks.isEmpty else { return try await next(request, context) }
        var context = context
        context.clientAddress = trustedProxies.clientAddress(
            peer: context.remoteAddress?.ipAddress,
            forwardedFor: Self.forwardedFor.map { request.headers[values: $0] } ?? [],
            forwarded: Self.forwarded.map { request.headers[values: $0] } ?? [])
        return try await next(request, context)
    }
}
