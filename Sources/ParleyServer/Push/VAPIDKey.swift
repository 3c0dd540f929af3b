import Crypto
import Foundation
import ParleyStore

/// The server's VAPID identity (RFC 8292): a P-256 key pair whose public half browsers subscribe
/// with (`applicationServerKey`), and whose private half signs a short-lived ES256 JWT on every
/// push, so a push service knows the pushes of a subscription come from the server it was made for.
struct VAPIDKey: Sendable {
    let privateKey: P256.Signing.PrivateKey

    init(privateKey: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) { self.privateKey = privateKey }

    /// The public key as browsers take it: the uncompressed point, base64url.
    var publicKey: String { Base64URL.encode(privateKey.publicKey.x963Representation) }

    /// The `Authorization` header for a push to `endpoint`: `vapid t=<JWT>, k=<public key>`, the
    /// token's audience the endpoint's origin, valid until `expiresAt` (at most 24 hours ahead, as
    /// RFC 8292 §2 allows), `subject` a `mailto:` or `https:` contact for the push service.
    func authorization(for endpoint: URL, subject: String, expiresAt: Date) throws -> String {
        guard let scheme = endpoint.scheme?.lowercased(), let host = endpoint.host?.lowercased() else { throw VAPIDFailure.endpointWithoutOrigin }
        // The origin as a push service compares it: lower case, no default port.
        let defaultPort = scheme == "https" ? 443 : scheme == "http" ? 80 : nil
        let audience = "\(scheme)://\(host)" + (endpoint.port.flatMap { $0 == defaultPort ? nil : ":\($0)" } ?? "")
        let header = Base64URL.encode(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8))
        let claims = try JSONSerialization.data(
            withJSONObject: ["aud": audience, "exp": Int(expiresAt.timeIntervalSince1970), "sub": subject], options: [.sortedKeys])
        let signingInput = header + "." + Base64URL.encode(claims)
        let signature = try privateKey.signature(for: Array(signingInput.utf8))
        return "vapid t=\(signingInput).\(Base64URL.encode(signature.rawRepresentation)), k=\(publicKey)"
    }
}

enum VAPIDFailure: Error, Equatable {
    case endpointWithoutOrigin
}

extension VAPIDKey {
    /// The server's key: from ``PushConfiguration/vapidKeyFile`` when set (a single node beside its
    /// SQLite file), else from the database, where the first node to start stores it for all.
    static func load(_ configuration: PushConfiguration, store: any PushQueueStore) async throws -> VAPIDKey {
        if let file = configuration.vapidKeyFile { return try loadOrCreate(at: file) }
        let pem = try await store.sharedSecret(named: "vapid-private-key", orStore: VAPIDKey().privateKey.pemRepresentation)
        return VAPIDKey(privateKey: try P256.Signing.PrivateKey(pemRepresentation: pem))
    }
}
