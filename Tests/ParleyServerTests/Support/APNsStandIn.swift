import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import HummingbirdTesting
import NIOCore
import NIOSSL
import ParleyCore
@testable import ParleyServer
import Synchronization

/// Apple's push service on loopback: HTTP/2 over TLS (a self-signed certificate the sender is told
/// to trust), checking every header APNs checks and the provider token's ES256 signature.
final class APNsStandIn: Sendable {
    /// A certificate for 127.0.0.1 and localhost, valid until 2126; made for these tests only.
    static let certificate = """
        -----BEGIN CERTIFICATE-----
        MIIBmjCCAUGgAwIBAgIUUH6tligkSg8sZY5vPv0A0/dNJV4wCgYIKoZIzj0EAwIw
        FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyNjA3NTQxMFoYDzIxMjYxMTAy
        MDc1NDEwWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
        PQMBBwNCAATYg58KHhWlJ2oOEBqIZFjRNruXRUMxctIkIHJuUayerR8C3zfBAYQq
        g5e/ORhN1oCEsQWYFGr64/iyygehpLdao28wbTAdBgNVHQ4EFgQUd7IkLgu3J+us
        yXldDG5PY4DZFfYwHwYDVR0jBBgwFoAUd7IkLgu3J+usyXldDG5PY4DZFfYwDwYD
        VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwCgYIKoZI
        zj0EAwIDRwAwRAIgJ+kvfJeSC+TQCxmJ6Dcv4HOAHsyxOSFZ6UgwXAmCinMCIAoP
        xeMlMt85xc02WtqBE0UEYvJCtv7CMLk3ReYYvtba
        -----END CERTIFICATE-----
        """
    static let certificateKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgrLUO7oCJcJYf/YvK
        bgbilrl82pLiYqSZfU+Vv9YsuGihRANCAATYg58KHhWlJ2oOEBqIZFjRNruXRUMx
        ctIkIHJuUayerR8C3zfBAYQqg5e/ORhN1oCEsQWYFGr64/iyygehpLda
        -----END PRIVATE KEY-----
        """

    struct Delivery: Sendable {
        let path: String
        let headers: HTTPFields
        let aps: APS
        let payload: PushPayload
        let token: String
    }

    /// Apple's `aps` dictionary as the stand-in read it.
    struct APS: Decodable, Equatable, Sendable {
        struct Alert: Decodable, Equatable, Sendable {
            var title: String
            var body: String
        }
        var alert: Alert?
        var badge: Int?
        var sound: String?
        var threadID: String?
        var mutableContent: Int?
        var contentAvailable: Int?

        enum CodingKeys: String, CodingKey {
            case alert, badge, sound
            case threadID = "thread-id"
            case mutableContent = "mutable-content"
            case contentAvailable = "content-available"
        }
    }

    /// The whole body: `aps` and the app's own `parley` payload.
    struct Body: Decodable {
        var aps: APS
        var parley: PushPayload
    }

    /// A request context that keeps the channel, to tell HTTP/2 streams (a child of the connection) apart.
    struct Context: RequestContext {
        var coreContext: CoreRequestContextStorage
        let channel: any Channel
        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            channel = source.channel
        }
    }

    let publicKey: P256.Signing.PublicKey
    let keyID: String, teamID: String, topic: String
    private let state = Mutex<(deliveries: [Delivery], answers: [(Int, String?)], problems: [String])>(([], [], []))

    init(publicKey: P256.Signing.PublicKey, keyID: String, teamID: String, topic: String) {
        self.publicKey = publicKey
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
    }

    var deliveries: [Delivery] { state.withLock { $0.deliveries } }
    var problems: [String] { state.withLock { $0.problems } }
    /// The next answers (status and APNs `reason`), in order; then 200.
    func answer(_ answers: [(Int, String?)]) { state.withLock { $0.answers = answers } }

    /// Runs the stand-in with its base URL.
    func run<T: Sendable>(_ body: @Sendable (_ base: String) async throws -> T) async throws -> T {
        let router = Router(context: Context.self)
        router.post("**") { request, context -> Response in
            let bytes = Array(try await request.body.collect(upTo: 4096).readableBytesView)
            let http2 = context.channel.parent?.parent != nil
            let (status, reason) = self.receive(request.uri.path, request.headers, bytes, http2: http2)
            let json = reason.map { text in #"{"reason":"\#(text)"}"# } ?? ""
            return Response(status: HTTPResponse.Status(code: status), body: .init(byteBuffer: ByteBuffer(string: json)))
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(Self.certificate.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(Self.certificateKey.utf8), format: .pem)))
        tls.applicationProtocols = ["h2"]
        let app = Application(router: router, server: try .http2Upgrade(tlsConfiguration: tls), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in
            guard let port = client.port else { throw TestFailure("no port") }
            return try await body("https://127.0.0.1:\(port)")
        }
    }

    private func receive(_ path: String, _ headers: HTTPFields, _ bytes: [UInt8], http2: Bool) -> (Int, String?) {
        do {
            guard http2 else { throw TestFailure("not HTTP/2") }
            let token = try check(headers)
            guard let device = path.split(separator: "/").last, device.count == 64, path.hasSuffix("/3/device/\(device)") else {
                throw TestFailure("path \(path)")
            }
            let body = try JSONDecoder().decode(Body.self, from: Data(bytes))
            return state.withLock { state in
                state.deliveries.append(Delivery(path: path, headers: headers, aps: body.aps, payload: body.parley, token: token))
                if !state.answers.isEmpty { return state.answers.removeFirst() }
                return (200, nil)
            }
        } catch {
            state.withLock { $0.problems.append("\(error)") }
            return (400, "BadRequest")
        }
    }

    /// The headers APNs requires, and the provider token: ES256 by this key, this key id and team, fresh.
    private func check(_ headers: HTTPFields) throws -> String {
        func header(_ name: String) -> String? { headers[HTTPField.Name(name)!] }
        guard header("apns-topic") == topic else { throw TestFailure("apns-topic \(header("apns-topic") ?? "none")") }
        guard let type = header("apns-push-type"), ["alert", "background"].contains(type) else { throw TestFailure("apns-push-type") }
        guard header("apns-priority") == (type == "alert" ? "10" : "5") else { throw TestFailure("apns-priority for \(type)") }
        guard let collapse = header("apns-collapse-id"), !collapse.isEmpty, collapse.utf8.count <= 64 else { throw TestFailure("apns-collapse-id") }
        guard let expiration = header("apns-expiration").flatMap(Int.init), expiration > Int(Date().timeIntervalSince1970) else {
            throw TestFailure("apns-expiration")
        }
        guard let authorization = header("authorization"), authorization.hasPrefix("bearer ") else { throw TestFailure("authorization") }
        let token = String(authorization.dropFirst(7))
        let parts = token.split(separator: ".").map(String.init)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw TestFailure("malformed provider token") }
        guard publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature), for: Array((parts[0] + "." + parts[1]).utf8)) else {
            throw TestFailure("provider token signature")
        }
        let jose = try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any] ?? [:]
        let claims = try JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any] ?? [:]
        guard jose["alg"] as? String == "ES256", jose["kid"] as? String == keyID, claims["iss"] as? String == teamID,
            let issued = claims["iat"] as? Int, abs(issued - Int(Date().timeIntervalSince1970)) < 3600
        else { throw TestFailure("provider token claims \(jose) \(claims)") }
        return token
    }
}
