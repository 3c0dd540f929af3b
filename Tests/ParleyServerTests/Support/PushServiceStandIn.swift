import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ParleyCore
@testable import ParleyServer
import Synchronization

/// A Web Push service on loopback, as a browser's push service would take Parley's pushes: it
/// decrypts each body with the browser's keys (``WebPushEncryptionTests/decrypt``), checks the
/// VAPID token's signature, and answers as told per subscription.
final class PushServiceStandIn: Sendable {
    /// One push as the browser would get it.
    struct Delivery: Sendable {
        let subscription: String
        let payload: PushPayload
        let headers: HTTPFields
    }

    /// A browser's subscription: its keys, and the endpoint to register.
    struct Browser: Sendable {
        let name: String
        let key = P256.KeyAgreement.PrivateKey()
        let auth = (0..<16).map { _ in UInt8.random(in: 0...255) }

        func body(base: String) -> API.WebPushSubscriptionBody {
            API.WebPushSubscriptionBody(
                endpoint: "\(base)/push/\(name)",
                keys: .init(p256dh: Base64URL.encode(key.publicKey.x963Representation), auth: Base64URL.encode(auth)))
        }
    }

    private let state = Mutex<(browsers: [String: Browser], deliveries: [Delivery], answers: [String: [Int]], problems: [String])>(([:], [], [:], []))

    func add(_ browser: Browser) { state.withLock { $0.browsers[browser.name] = browser } }

    /// Pushes to these subscriptions get no answer until ``releaseHeld()`` (a push service that hangs).
    private let held = Mutex<(names: Set<String>, waiting: [CheckedContinuation<Void, Never>], released: Bool)>(([], [], false))
    func hold(_ name: String) { held.withLock { _ = $0.names.insert(name) } }
    var heldRequests: Int { held.withLock { $0.waiting.count } }
    func releaseHeld() {
        let waiting = held.withLock { state in
            state.released = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    private func waitIfHeld(_ name: String) async {
        await withCheckedContinuation { continuation in
            let wait = held.withLock { state in
                guard state.names.contains(name), !state.released else { return false }
                state.waiting.append(continuation)
                return true
            }
            if !wait { continuation.resume() }
        }
    }
    /// The statuses the next pushes to `name` get, in order (then 201), with `Retry-After` when given.
    func answer(_ name: String, with statuses: [Int], retryAfter: String? = nil) {
        state.withLock { $0.answers[name] = statuses }
        retryAfters.withLock { $0[name] = retryAfter }
    }
    private let retryAfters = Mutex<[String: String]>([:])
    /// How many pushes to `name` were answered with a queued status (``answer(_:with:retryAfter:)``).
    func refused(_ name: String) -> Int { refusals.withLock { $0[name, default: 0] } }
    private let refusals = Mutex<[String: Int]>([:])
    var deliveries: [Delivery] { state.withLock { $0.deliveries } }
    /// VAPID or decryption failures seen.
    var problems: [String] { state.withLock { $0.problems } }
    func deliveries(to name: String) -> [Delivery] { deliveries.filter { $0.subscription == name } }

    /// Runs the stand-in for `body`, with its base URL.
    static func run<T: Sendable>(_ body: @Sendable (_ base: String, _ service: PushServiceStandIn) async throws -> T) async throws -> T {
        let service = PushServiceStandIn()
        let router = Router()
        router.post("/push/:name") { request, context -> Response in
            let bytes = Array(try await request.body.collect(upTo: 8192).readableBytesView)
            let name = context.parameters.get("name") ?? ""
            await service.waitIfHeld(name)
            let status = service.receive(name, request.headers, bytes)
            var headers = HTTPFields()
            if status != .created, let after = service.retryAfters.withLock({ $0[name] }) { headers[HTTPField.Name("Retry-After")!] = after }
            return Response(status: status, headers: headers)
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in
            guard let port = client.port else { throw TestFailure("no port") }
            return try await body("http://127.0.0.1:\(port)", service)
        }
    }

    private func receive(_ name: String, _ headers: HTTPFields, _ body: [UInt8]) -> HTTPResponse.Status {
        state.withLock { state in
            if var queued = state.answers[name], !queued.isEmpty {
                let status = queued.removeFirst()
                state.answers[name] = queued
                refusals.withLock { $0[name, default: 0] += 1 }
                return HTTPResponse.Status(code: status)
            }
            guard let browser = state.browsers[name] else { return .notFound }
            do {
                try Self.checkVAPID(headers)
                let plain = try WebPushEncryptionTests.decrypt(body, with: browser.key, auth: browser.auth)
                state.deliveries.append(Delivery(subscription: name, payload: try JSONDecoder().decode(PushPayload.self, from: Data(plain)), headers: headers))
                return .created
            } catch {
                state.problems.append("\(name): \(error)")
                return .badRequest
            }
        }
    }

    /// `Authorization: vapid t=<JWT>, k=<key>`: the JWT signed by `k`, for this origin, not expired.
    static func checkVAPID(_ headers: HTTPFields) throws {
        guard let value = headers[.authorization], value.hasPrefix("vapid t="), let comma = value.firstRange(of: ", k=") else {
            throw TestFailure("no VAPID authorization")
        }
        let token = String(value[value.index(value.startIndex, offsetBy: 8)..<comma.lowerBound])
        let parts = token.split(separator: ".").map(String.init)
        guard parts.count == 3, let key = Base64URL.decode(String(value[comma.upperBound...])), let signature = Base64URL.decode(parts[2]),
            let claimsBytes = Base64URL.decode(parts[1])
        else { throw TestFailure("malformed VAPID token") }
        let publicKey = try P256.Signing.PublicKey(x963Representation: key)
        guard publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature), for: Array((parts[0] + "." + parts[1]).utf8)) else {
            throw TestFailure("VAPID signature does not verify")
        }
        let claims = try JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any] ?? [:]
        guard let aud = claims["aud"] as? String, aud.hasPrefix("http://127.0.0.1:"), let exp = claims["exp"] as? Int,
            exp > Int(Date().timeIntervalSince1970), exp <= Int(Date().timeIntervalSince1970) + 86_400, claims["sub"] is String
        else { throw TestFailure("VAPID claims wrong: \(claims)") }
    }
}

/// Waits (polling, bounded) until `condition` holds; what it waited for goes in the failure.
func eventually(_ what: String, within limit: Duration = .seconds(20), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw TestFailure("timed out waiting for \(what)")
}
