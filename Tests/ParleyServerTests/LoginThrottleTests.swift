import Foundation
import HTTPTypes
import HummingbirdBcrypt
import ParleyCore
@testable import ParleyServer
import Synchronization
import Testing

/// Login throttling (OWASP-style): guessing from one place slows down exponentially, a distributed
/// attack hits a per-account ceiling, and neither locks the owner out. The clients' addresses are
/// played through a trusted proxy's `X-Forwarded-For`.
@Suite struct LoginThrottleTests {
    static func realisticLimits(_ configuration: inout ServerConfiguration) {
        configuration.loginsPerMinute = 30
        configuration.loginBurst = 30
        configuration.trustedProxies = TrustedProxies([IPNetwork("127.0.0.1"), IPNetwork("::1")].compactMap { $0 })
    }

    static func attempt(_ api: TestAPI, _ username: String, _ password: String, from address: String) async throws -> APIResponse {
        let body = String(decoding: try JSONEncoder().encode(API.LoginRequest(username: username, password: password)), as: UTF8.self)
        return try await api.request(.post, "/v1/auth/login", json: body, headers: [HTTPField.Name("X-Forwarded-For")!: address])
    }

    @Test func wrongGuessesFromOtherAddressesDoNotLockTheOwnerOut() async throws {
        try await TestServer.run(configure: Self.realisticLimits) { api in
            _ = try await api.register("victim")
            #expect(try await Self.attempt(api, "victim", "correct horse", from: "198.51.100.1").status == .ok)
            for attacker in 1...10 {
                for _ in 0..<3 {
                    #expect(try await Self.attempt(api, "victim", "wrong guess \(attacker)", from: "203.0.113.\(attacker)").status == .unauthorized)
                }
            }
            #expect(try await Self.attempt(api, "victim", "correct horse", from: "198.51.100.1").status == .ok, "the owner's usual address")
            #expect(try await Self.attempt(api, "victim", "correct horse", from: "192.0.2.50").status == .ok, "and a new one")
        }
    }

    /// End to end: the wait after five wrong guesses refuses even the right password from that
    /// address, and no other. (A first wait of a minute, so a loaded machine cannot outlast it; the
    /// doubling is timed in `LoginBackoffRulesTests` on a manual clock.)
    @Test func guessingFromOneAddressIsMadeToWait() async throws {
        try await TestServer.run(configure: {
            Self.realisticLimits(&$0)
            $0.loginBackoffSeconds = 60
        }) { api in
            _ = try await api.register("victim")
            for _ in 0..<5 { #expect(try await Self.attempt(api, "victim", "wrong guess", from: "203.0.113.9").status == .unauthorized) }
            let throttled = try await Self.attempt(api, "victim", "correct horse", from: "203.0.113.9")
            #expect(throttled.status == .tooManyRequests && throttled.errorCode == .rateLimited)
            #expect((1...60).contains(Int(throttled.headers[.retryAfter] ?? "") ?? 0), "Retry-After: \(throttled.headers[.retryAfter] ?? "none")")
            #expect(try await Self.attempt(api, "victim", "correct horse", from: "198.51.100.1").status == .ok, "others are unaffected")
        }
    }

    @Test func aDistributedAttackHitsThePerAccountCeilingButTheOwnersAddressDoesNot() async throws {
        try await TestServer.run(configure: {
            Self.realisticLimits(&$0)
            $0.loginFailuresPerUsernamePerHour = 20
        }) { api in
            _ = try await api.register("victim")
            #expect(try await Self.attempt(api, "victim", "correct horse", from: "198.51.100.1").status == .ok)
            for attacker in 1...20 {
                #expect(try await Self.attempt(api, "victim", "wrong guess", from: "203.0.113.\(attacker)").status == .unauthorized)
            }
            #expect(try await Self.attempt(api, "victim", "wrong guess", from: "203.0.113.99").status == .tooManyRequests)
            #expect(try await Self.attempt(api, "victim", "correct horse", from: "198.51.100.1").status == .ok)
        }
    }

    @Test func oneAddressCannotTryManyAccountsQuickly() async throws {
        try await TestServer.run(configure: {
            Self.realisticLimits(&$0)
            // A burst of 30, refilled at one a minute: the refusal comes within a few more however
            // long each attempt takes (at one every 2 s, a loaded machine's slow attempts kept the
            // bucket full and no refusal came).
            $0.loginsPerMinute = 1
        }) { api in
            var statuses: [HTTPResponse.Status] = []
            for index in 0..<60 where !statuses.contains(.tooManyRequests) {
                statuses.append(try await Self.attempt(api, "user\(index)", "password guess", from: "203.0.113.5").status)
            }
            #expect(statuses.prefix(30).allSatisfy { $0 == .unauthorized })
            #expect(statuses.last == .tooManyRequests)
        }
    }

    /// A NUL was cut by SQLite (`victim\0x` found `victim`) and by bcrypt (`abc\0…` matched `abc`),
    /// while the throttle counted another key. Such strings are refused before anything sees them.
    @Test func controlCharactersInUsernamesAndPasswordsAreRefusedEverywhere() async throws {
        try await TestServer.run(configure: Self.realisticLimits) { api in
            let victim = try await api.register("victim")
            let nulName = try await Self.attempt(api, "victim\u{0}x", "correct horse", from: "203.0.113.1")
            #expect(nulName.status == .badRequest && nulName.errorCode == .invalidUsername)
            let nulPassword = try await Self.attempt(api, "victim", "correct horse\u{0}whatever", from: "203.0.113.1")
            #expect(nulPassword.status == .badRequest && nulPassword.errorCode == .invalidPassword)
            let register = try await api.request(
                .post, "/v1/auth/register",
                encoding: API.RegisterRequest(username: "mallory", displayName: "M", password: "abc\u{0}defghijk"))
            #expect(register.errorCode == .invalidPassword)
            let tab = try await api.request(
                .post, "/v1/auth/register", encoding: API.RegisterRequest(username: "mal\tlory", displayName: "M", password: "abcdefghijk"))
            #expect(tab.errorCode == .invalidUsername)
            let search = try await api.request(.get, "/v1/users?query=vic%00tim", token: victim.token)
            #expect(search.errorCode == .invalidQuery)
            #expect(try await api.request(.get, "/v1/users/\(victim.id.rawValue)%00x", token: victim.token).status == .notFound)
        }
    }
}

/// Passwords reach bcrypt through a SHA-256 pre-hash, so bcrypt's 72-byte limit cuts nothing.
@Suite struct PasswordHashingTests {
    @Test func everyCharacterOfALongPasswordCounts() async throws {
        try await TestServer.run { api in
            let long = String(repeating: "correct horse battery staple ", count: 4)
            _ = try await api.register("alice", password: long + "1")
            let almost = try await api.request(.post, "/v1/auth/login", encoding: API.LoginRequest(username: "alice", password: long + "2"))
            #expect(almost.status == .unauthorized, "differs only after byte 72")
            #expect(try await api.login("alice", password: long + "1").user.username == "alice")
        }
    }

    @Test func hashesFromBeforeThePreHashStillVerify() {
        let legacy = Bcrypt.hash("old password", cost: 4)
        #expect(PasswordHashing.verify("old password", against: legacy))
        #expect(!PasswordHashing.verify("old passwore", against: legacy))
        let current = PasswordHashing.hash("new password", cost: 4)
        #expect(current.hasPrefix("sha256+$2"))
        #expect(PasswordHashing.verify("new password", against: current))
        #expect(!PasswordHashing.verify("new passwore", against: current))
    }
}

/// How the client address is found behind reverse proxies.
@Suite struct TrustedProxyTests {
    let proxies = TrustedProxies([IPNetwork("10.0.0.0/8"), IPNetwork("::1")].compactMap { $0 })

    @Test func networksParseAndMatch() throws {
        let network = try #require(IPNetwork("10.0.0.0/8"))
        #expect(network.contains(try #require(IPNetwork.addressBytes("10.200.3.4"))))
        #expect(!network.contains(try #require(IPNetwork.addressBytes("11.0.0.1"))))
        #expect(network.contains(try #require(IPNetwork.addressBytes("::ffff:10.0.0.1"))), "IPv4-mapped IPv6")
        #expect(try #require(IPNetwork("fd00::/8")).contains(try #require(IPNetwork.addressBytes("fd12::1"))))
        for bad in ["10.0.0.0/33", "abc", "", "1.2.3.4/x", "::1/129", "10.0.0.1\u{0}"] { #expect(IPNetwork(bad) == nil, "\(bad)") }
    }

    @Test func headersFromAnUntrustedPeerAreIgnored() {
        #expect(proxies.clientAddress(peer: "203.0.113.5", forwardedFor: ["1.2.3.4"], forwarded: []) == "203.0.113.5")
    }

    @Test func theClientIsTheRightmostUntrustedHop() {
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["1.2.3.4"], forwarded: []) == "1.2.3.4")
        #expect(
            proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["6.6.6.6, 1.2.3.4, 10.0.0.9"], forwarded: []) == "1.2.3.4",
            "a spoofed left part is ignored")
        #expect(
            proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["6.6.6.6", "1.2.3.4"], forwarded: []) == "1.2.3.4",
            "several header lines form one chain")
        #expect(proxies.clientAddress(peer: "::1", forwardedFor: [], forwarded: [#"for="[2001:db8::1]:443";proto=https"#]) == "2001:db8::1")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: [], forwarded: ["for=192.0.2.60;proto=http"]) == "192.0.2.60")
    }

    @Test func anUnparsableChainLeavesTheProxysAddress() {
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: ["not-an-ip"], forwarded: []) == "10.0.0.2")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: [], forwarded: ["for=unknown"]) == "10.0.0.2")
        #expect(proxies.clientAddress(peer: "10.0.0.2", forwardedFor: [], forwarded: []) == "10.0.0.2")
    }
}

/// The backoff rule of ``LoginThrottle`` on a manual clock: 1 s, 2 s, 4 s … from the last failure,
/// per (username, address); a success resets it.
@Suite struct LoginBackoffRulesTests {
    final class ManualClock: Sendable {
        private let start = ContinuousClock.now
        private let offset = Mutex<Duration>(.zero)
        func advance(by duration: Duration) { offset.withLock { $0 += duration } }
        var now: ContinuousClock.Instant { start + offset.withLock { $0 } }
    }

    @Test func theWaitDoublesWithEachFurtherFailureAndASuccessResetsIt() {
        let clock = ManualClock()
        let throttle = LoginThrottle(.init(), now: { clock.now })
        for _ in 0..<5 {
            #expect(throttle.check(username: "v", address: "a") == nil)
            throttle.failed(username: "v", address: "a")
        }
        for wait in [1, 2, 4, 8] {
            #expect(throttle.check(username: "v", address: "a") == wait, "refused for \(wait) s")
            #expect(throttle.check(username: "v", address: "b") == nil, "another address may try")
            clock.advance(by: .seconds(wait) - .milliseconds(10))
            #expect(throttle.check(username: "v", address: "a") != nil, "still refused just before")
            clock.advance(by: .milliseconds(20))
            #expect(throttle.check(username: "v", address: "a") == nil, "allowed just after")
            throttle.failed(username: "v", address: "a")
        }
        clock.advance(by: .seconds(20))
        throttle.succeeded(username: "v", address: "a")
        #expect(throttle.check(username: "v", address: "a") == nil)
        throttle.failed(username: "v", address: "a")
        #expect(throttle.check(username: "v", address: "a") == nil, "five free failures again after a success")
    }

    @Test func theWaitStopsAtTheMaximum() {
        let clock = ManualClock()
        let throttle = LoginThrottle(.init(maxBackoffSeconds: 10), now: { clock.now })
        for _ in 0..<12 {
            throttle.failed(username: "v", address: "a")
            clock.advance(by: .milliseconds(1))
        }
        #expect(throttle.check(username: "v", address: "a") == 10)
    }
}
