import AsyncHTTPClient
import Crypto
import Foundation
import ParleyBench
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
@testable import ParleyServer
import ParleyTestSupport
import Synchronization
import Testing

/// ``WebPushSender`` against a push-service stand-in on loopback that decrypts what it receives as
/// the browser would and checks the VAPID token, and answers as push services do.
@Suite struct WebPushSenderTests {
    /// What the stand-in received.
    actor Received {
        var requests: [(path: String, headers: HTTPFields, body: [UInt8])] = []
        func add(_ path: String, _ headers: HTTPFields, _ body: [UInt8]) { requests.append((path, headers, body)) }
    }

    static func withPushService(_ body: @Sendable (_ base: String, _ received: Received) async throws -> Void) async throws {
        let received = Received()
        let router = Router()
        router.post("/push/:kind") { request, context -> Response in
            let bytes = try await request.body.collect(upTo: 8192)
            let kind = context.parameters.get("kind") ?? ""
            await received.add(kind, request.headers, Array(bytes.readableBytesView))
            switch kind {
            case "gone": return Response(status: .gone)
            case "busy": return Response(status: .tooManyRequests, headers: [HTTPField.Name("Retry-After")!: "7"])
            case "down": return Response(status: .serviceUnavailable)
            case "bad": return Response(status: .badRequest)
            case "redirect": return Response(status: .temporaryRedirect, headers: [.location: "/push/ok"])
            case "drip":  // answers at once, then sends its body a byte every half second for a minute
                return Response(
                    status: .created,
                    body: ResponseBody { writer in
                        for _ in 0..<120 {
                            try await writer.write(ByteBuffer(string: "."))
                            try await Task.sleep(for: .milliseconds(500))
                        }
                        try await writer.finish(nil)
                    })
            default: return Response(status: .created)
            }
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            guard let port = client.port else { throw TestFailure("no port") }
            try await body("http://127.0.0.1:\(port)", received)
        }
    }

    @Test func aMessageReachesTheBrowserEncryptedWithItsHeadersAndEachAnswerMeansWhatItSays() async throws {
        try await Self.withPushService { base, received in
            let browser = P256.KeyAgreement.PrivateKey()
            let auth = (0..<16).map { _ in UInt8.random(in: 0...255) }
            let vapid = VAPIDKey()
            let sender = WebPushSender(client: .shared, vapid: vapid, subject: "mailto:ops@example.com")
            func subscription(_ kind: String) -> WebPushSubscription {
                WebPushSubscription(endpoint: URL(string: "\(base)/push/\(kind)")!, p256dh: Array(browser.publicKey.x963Representation), auth: auth)
            }
            let payload = Array(#"{"conversation":"c1","body":"Hi 🙂"}"#.utf8)
            #expect(try await sender.send(payload, to: subscription("ok"), topic: "c1", urgency: .high, timeToLive: 600) == .delivered)
            #expect(try await sender.send(payload, to: subscription("gone")) == .subscriptionGone)
            #expect(try await sender.send(payload, to: subscription("busy")) == .retry(after: .seconds(7)))
            #expect(try await sender.send(payload, to: subscription("down")) == .retry(after: nil))
            #expect(try await sender.send(payload, to: subscription("bad")) == .refused(status: 400))

            let first = try #require(await received.requests.first)
            #expect(first.path == "ok")
            #expect(try WebPushEncryptionTests.decrypt(first.body, with: browser, auth: auth) == payload, "the browser reads it")
            let header = { (name: String) in first.headers[HTTPField.Name(name)!] }
            #expect(header("TTL") == "600" && header("Urgency") == "high" && header("Topic") == "c1")
            #expect(header("Content-Encoding") == "aes128gcm")
            let authorization = try #require(header("Authorization"))
            #expect(authorization.hasSuffix(", k=\(vapid.publicKey)"))
            let token = try #require(authorization.split(separator: " ").dropFirst().first).dropFirst(2).dropLast()
            let parts = token.split(separator: ".").map(String.init)
            let claims = try JSONSerialization.jsonObject(with: Data(WebPushEncryptionTests.bytes(parts[1]))) as? [String: Any]
            #expect(claims?["aud"] as? String == base, "the token is for this push service's origin")
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: WebPushEncryptionTests.bytes(parts[2]))
            let verifier = try P256.Signing.PublicKey(x963Representation: WebPushEncryptionTests.bytes(vapid.publicKey))
            #expect(verifier.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
        }
    }

    /// A redirect is refused, never followed: a public endpoint must not lead the server's POST elsewhere.
    @Test func aRedirectIsRefusedNotFollowed() async throws {
        try await Self.withPushService { base, received in
            let client = WebPushSender.makeClient()
            let sender = WebPushSender(client: client, vapid: VAPIDKey(), subject: "mailto:ops@example.com")
            let subscription = WebPushSubscription(
                endpoint: URL(string: "\(base)/push/redirect")!, p256dh: Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation),
                auth: [UInt8](repeating: 1, count: 16))
            let outcome = try await sender.send([1], to: subscription)
            try await client.shutdown()
            #expect(outcome == .refused(status: 307))
            #expect(await received.requests.map(\.path) == ["redirect"])
        }
    }

    /// Rule 3: the timeout covers the answer's body too. Before, a service that answered 201 and
    /// then sent its body a byte at a time held the push (and a dispatcher slot) until it stopped.
    @Test func anAnswerWhoseBodyDribblesHoldsThePushNoLongerThanTheTimeout() async throws {
        try await Self.withPushService { base, received in
            let client = WebPushSender.makeClient()
            // 5 s: a loaded machine may take over a second to connect and get the head, which
            // would make this a timeout before any body; the body takes a minute.
            let sender = WebPushSender(client: client, vapid: VAPIDKey(), subject: "mailto:ops@example.com", timeout: .seconds(5))
            let subscription = WebPushSubscription(
                endpoint: URL(string: "\(base)/push/drip")!, p256dh: Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation),
                auth: [UInt8](repeating: 1, count: 16))
            var outcome: WebPushSender.Outcome?
            let took = try await ContinuousClock().measure { outcome = try await sender.send([1], to: subscription) }
            try await client.shutdown()
            #expect(outcome == .delivered, "the status said delivered")
            #expect(took < .seconds(30), "held \(took), not the minute the body takes")
            #expect(await received.requests.map(\.path) == ["drip"])
        }
    }

    /// Rule 4: a name is reached at the address its check found, never looked up by the HTTP client
    /// (no resolver but the check's knows `push.parley.test`: unpinned, the push fails to connect),
    /// and its client is kept for the next push.
    @Test func aNameIsReachedAtTheAddressItsCheckFound() async throws {
        try await Self.withPushService { base, received in
            let port = try #require(URL(string: base)?.port)
            let names = PushHostCheckTests.Names(["push.parley.test": [[127, 0, 0, 1]]])
            let sender = WebPushSender(
                client: .shared, vapid: VAPIDKey(), subject: "mailto:ops@example.com",
                hostCheck: PushHostCheck(allowLoopback: true, resolve: names.resolve))
            let subscription = WebPushSubscription(
                endpoint: URL(string: "http://push.parley.test:\(port)/push/ok")!,
                p256dh: Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation), auth: [UInt8](repeating: 1, count: 16))
            #expect(try await sender.send([1], to: subscription) == .delivered)
            #expect(try await sender.send([2], to: subscription) == .delivered)
            #expect(sender.pinnedClients.count == 1 && names.lookups.load(ordering: .relaxed) == 1)
            #expect(await received.requests.map(\.path) == ["ok", "ok"])
            await sender.pinnedClients.shutdown()
        }
    }

    /// ``PinnedPushClients`` rule 5: a checked address where nothing answers is left for another
    /// one of the name's addresses at the next push.
    @Test func aDeadAddressOfSeveralIsLeftForAnother() async throws {
        try await Self.withPushService { base, received in
            let port = try #require(URL(string: base)?.port)
            // 127.0.0.2 is loopback too, but the stand-in listens on 127.0.0.1 only.
            let names = PushHostCheckTests.Names(["push.parley.test": [[127, 0, 0, 2], [127, 0, 0, 1]]])
            let sender = WebPushSender(
                client: .shared, vapid: VAPIDKey(), subject: "mailto:ops@example.com", timeout: .seconds(2),
                hostCheck: PushHostCheck(allowLoopback: true, resolve: names.resolve))
            let subscription = WebPushSubscription(
                endpoint: URL(string: "http://push.parley.test:\(port)/push/ok")!,
                p256dh: Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation), auth: [UInt8](repeating: 1, count: 16))
            #expect(try await sender.send([1], to: subscription) == .retry(after: nil), "pinned to the first address, where nothing listens")
            #expect(try await sender.send([2], to: subscription) == .delivered, "pinned to the other")
            #expect(try await sender.send([3], to: subscription) == .delivered)
            #expect(await received.requests.map(\.path) == ["ok", "ok"])
            await sender.pinnedClients.shutdown()
        }
    }

    /// ``PinnedPushClients`` rules 1, 2 and 4.
    @Test func aPinnedClientIsKeptWhileItsAddressIsCheckedAndReplacedWhenNot() async throws {
        let pinned = PinnedPushClients(grace: .zero)
        let first = try #require(pinned.client(for: "push.parley.test", checked: [[127, 0, 0, 1], [127, 0, 0, 2]]))
        #expect(pinned.client(for: "push.parley.test", checked: [[127, 0, 0, 2], [127, 0, 0, 1]]) === first, "its address still checked")
        let second = try #require(pinned.client(for: "push.parley.test", checked: [[127, 0, 0, 3]]))
        #expect(second !== first && pinned.count == 1, "pinned again")
        #expect(pinned.client(for: "push.parley.test", checked: []) == nil)
        for index in 0..<(PinnedPushClients.limit + 6) { _ = pinned.client(for: "h\(index).parley.test", checked: [[127, 0, 0, 1]]) }
        #expect(pinned.count == PinnedPushClients.limit)
        #expect(PinnedPushClients.text([0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]) == "2001:db8:0:0:0:0:0:1")
        #expect(PinnedPushClients.text([192, 0, 2, 7]) == "192.0.2.7")
        await pinned.shutdown()
        #expect(pinned.client(for: "push.parley.test", checked: [[127, 0, 0, 1]]) == nil, "none after shutdown")
    }

    @Test func aPushServiceThatIsNotThereIsRetriedLater() async throws {
        let port = try LoopbackPort.reservable()  // nothing listens there: no other test is given it
        let sender = WebPushSender(client: .shared, vapid: VAPIDKey(), subject: "mailto:ops@example.com", timeout: .seconds(1))
        let subscription = WebPushSubscription(
            endpoint: URL(string: "http://127.0.0.1:\(port)/push/x")!, p256dh: Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation),
            auth: [UInt8](repeating: 1, count: 16))
        #expect(try await sender.send([1, 2, 3], to: subscription) == .retry(after: nil))
    }

    @Test func topicsAreShortBase64URLAndStable() {
        #expect(WebPushSender.topic("dm_abc-123") == "dm_abc-123")
        let long = "grp_" + String(repeating: "x", count: 60) + ":#"
        #expect(WebPushSender.topic(long).count == 32)
        #expect(WebPushSender.topic(long) == WebPushSender.topic(long))
        #expect(WebPushSender.topic(long) != WebPushSender.topic(long + "y"))
        #expect(WebPushSender.topic(long).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }
}
