internal import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A browser's push subscription (the `PushSubscription` a service worker gets): where its push
/// service takes messages, and the keys only that browser can decrypt with.
struct WebPushSubscription: Sendable, Equatable {
    var endpoint: URL
    /// The browser's P-256 public key, uncompressed (65 bytes).
    var p256dh: [UInt8]
    /// The browser's 16-byte authentication secret.
    var auth: [UInt8]
}

/// Delivers one message to a subscription's push service (RFC 8030) and says what became of it,
/// so the push queue knows whether to forget it, retry it or drop the subscription.
///
/// Rules:
/// 1. The body is ``WebPushEncryption`` of the payload; the request carries `TTL`, `Urgency`,
///    `Content-Encoding: aes128gcm` and a VAPID `Authorization` for the endpoint's origin that
///    expires in 12 hours; a `Topic` (at most 32 base64url characters) makes the push service keep
///    only the newest message of that topic while the browser is away (a conversation's messages
///    collapse into one).
/// 2. 2xx: delivered. 404 or 410: the subscription is gone (unsubscribed or expired), remove it.
///    429 and 5xx, a timeout or a connection failure: retry later, after `Retry-After` when given.
///    Anything else (3xx, 400, 403, 413): this message is refused and retrying will not help.
///    Redirects are never followed (``makeClient()``): a registered public endpoint must not lead
///    the server's POST into its own network. `Retry-After` is taken up to an hour.
/// 3. Every request is bounded in time (``timeout``), the answer's body included; a dead or
///    dribbling push service never holds a caller longer. AsyncHTTPClient keeps trying to connect
///    until then (a refused connection too), so the queue that calls this sends to several push
///    services at once.
/// 4. Before the request, the endpoint's host name is looked up (``PushHostCheck``): a name that
///    resolves inside the server's networks is `endpointInside` and nothing is sent; a failed
///    lookup is "retry later". A name is then reached at an address that check found
///    (``PinnedPushClients``), never looked up again by the HTTP client; an endpoint written as an
///    address goes through ``client``.
struct WebPushSender: Sendable {
    enum Outcome: Sendable, Equatable {
        case delivered
        case subscriptionGone
        /// The endpoint's name resolves inside the server's networks (``PushHostCheck``).
        case endpointInside
        case retry(after: Duration?)
        case refused(status: Int)
    }

    enum Urgency: String, Sendable { case veryLow = "very-low", low, normal, high }

    /// The client to send with: ``makeClient()``, which follows no redirect.
    let client: HTTPClient
    let vapid: VAPIDKey
    /// A `mailto:` or `https:` contact for push services' operators (RFC 8292 §2.1).
    let subject: String
    var timeout: TimeAmount = .seconds(15)
    /// Where the endpoint's name leads, looked up before each request (rule 4).
    var hostCheck = PushHostCheck(allowLoopback: false)
    /// The clients that reach names at the addresses ``hostCheck`` found (rule 4).
    var pinnedClients = PinnedPushClients(grace: .seconds(120))
    /// Signed VAPID headers by audience, reused while they have 6 of their 12 hours left (a
    /// signature per push was a tenth of a push's cost).
    let authorizations = VAPIDAuthorizations()

    /// Sends `payload` (at most ``WebPushEncryption/maxPlaintextBytes`` with `padding`).
    func send(
        _ payload: [UInt8], to subscription: WebPushSubscription, topic: String? = nil, urgency: Urgency = .normal,
        timeToLive: Int = 86_400, padding: Int = 0, now: Date = Date()
    ) async throws -> Outcome {
        switch await hostCheck.verdict(for: subscription.endpoint) {
        case .outside: break
        case .inside: return .endpointInside
        case .unresolved: return .retry(after: nil)
        }
        guard let client = reachingClient(for: subscription.endpoint) else { return .retry(after: nil) }
        let body = try WebPushEncryption.encrypt(payload, p256dh: subscription.p256dh, auth: subscription.auth, padding: padding)
        var request = HTTPClientRequest(url: subscription.endpoint.absoluteString)
        request.method = .POST
        request.headers.add(name: "TTL", value: String(max(0, timeToLive)))
        request.headers.add(name: "Urgency", value: urgency.rawValue)
        request.headers.add(name: "Content-Encoding", value: "aes128gcm")
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.headers.add(
            name: "Authorization",
            value: try authorizations.header(for: subscription.endpoint, now: now) { expiresAt in
                try vapid.authorization(for: subscription.endpoint, subject: subject, expiresAt: expiresAt)
            })
        if let topic = topic.map(Self.topic) { request.headers.add(name: "Topic", value: topic) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let started = ContinuousClock.now
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: timeout)
        } catch {
            if let host = subscription.endpoint.host, client !== self.client { pinnedClients.failed(client, host: host) }
            return .retry(after: nil)
        }
        let outcome = Self.outcome(status: Int(response.status.code), retryAfter: response.headers.first(name: "Retry-After"))
        await Self.drain(response.body, within: .nanoseconds(timeout.nanoseconds) - (ContinuousClock.now - started))
        return outcome
    }

    /// ``client`` for an endpoint written as an address, a client pinned to a checked address for
    /// a name (rule 4); nil for a name whose checked addresses are gone (the check's answers were
    /// all forgotten meanwhile), which is tried again later.
    private func reachingClient(for endpoint: URL) -> HTTPClient? {
        guard let host = endpoint.host, !host.isEmpty else { return nil }
        if PushHostCheck.isAddress(host) { return client }
        return pinnedClients.client(for: host, checked: hostCheck.checkedAddresses(of: endpoint))
    }

    /// Reads an answer's body to its end, so that the connection is reused, but for no longer than
    /// what is left of the request's time (rule 3): the client's timeout ends with the answer's
    /// head, and a service that then sends its body a byte at a time held the push (and, claimed
    /// again, more of them) for ever. Cancelling the read closes that connection.
    static func drain(_ body: HTTPClientResponse.Body, within limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { _ = try? await body.collect(upTo: 64 << 10) }
            group.addTask { try? await Task.sleep(for: max(limit, .zero)) }
            await group.next()
            group.cancelAll()
        }
    }

    /// An HTTP client for push services: redirects refused, not followed (rule 2); `dnsOverride`
    /// connects to the given address for a name (``PinnedPushClients``).
    static func makeClient(dnsOverride: [String: String] = [:]) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.dnsOverride = dnsOverride
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Rule 2.
    static func outcome(status: Int, retryAfter: String?) -> Outcome {
        switch status {
        case 200..<300: .delivered
        case 404, 410: .subscriptionGone
        case 429, 500..<600: .retry(after: retryAfter.flatMap { Int($0) }.map { .seconds(min(3_600, max(0, $0))) })
        default: .refused(status: status)
        }
    }

    /// A push service topic: base64url, at most 32 characters (RFC 8030 §5.4); a longer key is
    /// hashed down so that the same key always gives the same topic.
    static func topic(_ key: String) -> String {
        let allowed = key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        if allowed, key.count <= 32 { return key }
        return String(Base64URL.encode(SHA256Digest.of(key)).prefix(32))
    }
}

/// The VAPID headers a sender has signed, by the endpoint's origin (scheme, host, port).
final class VAPIDAuthorizations: Sendable {
    private let signed = Mutex<[String: (header: String, expiresAt: Date)]>([:])

    /// The header for `endpoint`: a cached one with more than 6 hours left, else `sign`'s for 12 hours.
    func header(for endpoint: URL, now: Date, sign: (Date) throws -> String) throws -> String {
        let origin = "\(endpoint.scheme ?? "")://\(endpoint.host ?? ""):\(endpoint.port ?? 0)"
        if let cached = signed.withLock({ $0[origin] }), cached.expiresAt.timeIntervalSince(now) > 6 * 3600,
            cached.expiresAt.timeIntervalSince(now) <= 12 * 3600
        {
            return cached.header
        }
        let expiresAt = now.addingTimeInterval(12 * 3600)
        let header = try sign(expiresAt)
        signed.withLock { $0[origin] = (header, expiresAt) }
        return header
    }
}
