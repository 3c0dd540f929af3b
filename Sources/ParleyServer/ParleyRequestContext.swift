import Hummingbird
import HummingbirdWebSocket
import NIOCore
import ParleyCore

/// Per-request state: the authenticated user (set by ``TokenAuthenticator``) and the client address.
public struct ParleyRequestContext: RequestContext, WebSocketRequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>
    public let remoteAddress: SocketAddress?
    /// The session's user; `nil` until authenticated.
    public var userId: UserID?
    /// SHA-256 of the bearer token, kept so logout can revoke exactly this session.
    public var tokenHash: String?
    public var maxUploadSize: Int

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.remoteAddress = source.channel.remoteAddress
        self.maxUploadSize = ServerLimits.maxBodyBytes
    }

    /// The authenticated user, or a 401.
    func requireUser() throws -> UserID {
        guard let userId else { throw ParleyError(.unauthorized, "Sign in first.") }
        return userId
    }

    /// Address used to key throttles; loopback and unknown addresses share one key.
    var clientKey: String { remoteAddress?.ipAddress ?? "unknown" }
}

/// Fixed size limits. A 10,000-character message escaped in JSON stays well below them.
public enum ServerLimits {
    /// Largest accepted REST body and WebSocket frame, in bytes.
    public static let maxBodyBytes = 256 * 1024
}
