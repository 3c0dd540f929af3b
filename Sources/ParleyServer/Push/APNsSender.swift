internal import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import ParleyCore
import ParleyStore
import Synchronization

/// Sends notifications to Apple's push service (APNs) for iOS apps built on the SDK: HTTP/2 with a
/// provider token.
///
/// Rules:
/// 1. `POST {base}/3/device/{token}` to the production or sandbox service, as the device was
///    registered; `authorization: bearer <ES256 JWT {iss: team, iat}, header {kid}>`, the token
///    reused for 50 minutes (Apple refuses tokens older than an hour and ones renewed more often
///    than every 20 minutes).
/// 2. `message` pushes alert: `apns-push-type: alert`, priority 10, `mutable-content` (a
///    notification service extension may fetch the message), `thread-id` and `apns-collapse-id`
///    the conversation (iOS keeps one notification per conversation), the badge the user's unread.
///    The tidy-up kinds are background pushes (`content-available`, priority 5) the app acts on.
/// 3. 200: delivered. 410, or 400 `BadDeviceToken` / `DeviceTokenNotForTopic`: the device is gone.
///    429, 5xx, a timeout, a connection failure, 403 `ExpiredProviderToken` (the token is renewed):
///    retry. Anything else is refused.
final class APNsSender: Sendable {
    enum Outcome: Sendable, Equatable {
        case delivered
        case deviceGone
        case retry(after: Duration?)
        case refused(status: Int, reason: String)
    }

    let configuration: APNsConfiguration
    private let key: P256.Signing.PrivateKey
    private let client: HTTPClient
    private let token = Mutex<(value: String, issued: Date)?>(nil)
    var timeout: TimeAmount { .seconds(15) }

    init(_ configuration: APNsConfiguration) throws {
        self.configuration = configuration
        key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: configuration.keyFile, encoding: .utf8))
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trusted = configuration.trustedCertificatesFile {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(trusted))]
        }
        var http = HTTPClient.Configuration(tlsConfiguration: tls)
        http.httpVersion = .automatic  // HTTP/2 through ALPN, as APNs requires
        http.redirectConfiguration = .disallow
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
    }

    /// Rule 1: the current provider token.
    func providerToken(now: Date = Date()) throws -> String {
        try token.withLock { cached in
            if let cached, now.timeIntervalSince(cached.issued) < 50 * 60, now >= cached.issued { return cached.value }
            let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"\#(configuration.keyID)"}"#.utf8))
            let claims = Base64URL.encode(Array(#"{"iss":"\#(configuration.teamID)","iat":\#(Int(now.timeIntervalSince1970))}"#.utf8))
            let input = header + "." + claims
            let value = input + "." + Base64URL.encode(try key.signature(for: Array(input.utf8)).rawRepresentation)
            cached = (value, now)
            return value
        }
    }

    private func forgetToken() { token.withLock { $0 = nil } }

    /// Rules 2 and 3.
    func send(_ payload: PushPayload, to device: APNsDeviceRecord) async -> Outcome {
        let alert = payload.kind == .message
        let base = device.sandbox ? configuration.sandboxURL : configuration.productionURL
        var request = HTTPClientRequest(url: "\(base)/3/device/\(device.token)")
        request.method = .POST
        do {
            request.headers.add(name: "authorization", value: "bearer \(try providerToken())")
            request.body = .bytes(ByteBuffer(bytes: try Self.body(payload)))
        } catch {
            return .refused(status: 0, reason: "\(error)")
        }
        request.headers.add(name: "apns-topic", value: configuration.topic)
        request.headers.add(name: "apns-push-type", value: alert ? "alert" : "background")
        request.headers.add(name: "apns-priority", value: alert ? "10" : "5")
        request.headers.add(name: "apns-expiration", value: String(Int(Date().timeIntervalSince1970) + 86_400))
        request.headers.add(name: "apns-collapse-id", value: WebPushSender.topic(payload.conversationId.rawValue))
        request.headers.add(name: "content-type", value: "application/json")
        let response: HTTPClientResponse
        let text: String
        do {
            response = try await client.execute(request, timeout: timeout)
            text = String(buffer: try await response.body.collect(upTo: 64 << 10))
        } catch {
            return .retry(after: nil)
        }
        let reason = (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8)))?["reason"] ?? ""
        switch Int(response.status.code) {
        case 200: return .delivered
        case 410: return .deviceGone
        case 400 where ["BadDeviceToken", "DeviceTokenNotForTopic"].contains(reason): return .deviceGone
        case 403 where reason == "ExpiredProviderToken":
            forgetToken()
            return .retry(after: nil)
        case 429, 500..<600:
            return .retry(after: response.headers.first(name: "retry-after").flatMap { Int($0) }.map { .seconds(min(3_600, max(0, $0))) })
        case let status: return .refused(status: status, reason: reason)
        }
    }

    /// The JSON body: Apple's `aps` dictionary, and the payload itself under `parley` for the app.
    static func body(_ payload: PushPayload) throws -> [UInt8] {
        struct Alert: Encodable {
            var title: String
            var body: String
        }
        struct APS: Encodable {
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
        struct Body: Encodable {
            var aps: APS
            var parley: PushPayload
        }
        let aps =
            payload.kind == .message
            ? APS(
                alert: Alert(title: payload.title, body: payload.body), badge: payload.badge, sound: "default",
                threadID: payload.conversationId.rawValue, mutableContent: 1)
            : APS(contentAvailable: 1)
        return Array(try JSONEncoder().encode(Body(aps: aps, parley: payload)))
    }

    func shutdown() async {
        try? await client.shutdown()
    }
}
