import Foundation
import HTTPTypes
import ParleyCore
@testable import ParleyServer
import ParleyStore
import ParleyTestSupport
import Synchronization
import Testing

/// ``PushHostCheck``: a Web Push endpoint's name is looked up before each push, and one that
/// leads inside the server's networks gets nothing.
@Suite struct PushHostCheckTests {
    /// A resolver from a table, counting its lookups.
    final class Names: Sendable {
        let table: [String: [[UInt8]]]
        let lookups = Atomic<Int>(0)
        init(_ table: [String: [[UInt8]]]) { self.table = table }

        func resolve(_ host: String) async throws -> [[UInt8]] {
            lookups.add(1, ordering: .relaxed)
            guard let addresses = table[host] else { throw PushHostCheck.LookupFailed() }
            return addresses
        }
    }

    static let names = Names([
        "fcm.parley.test": [[142, 250, 74, 138], [0x2a, 0x00, 0x14, 0x50] + [UInt8](repeating: 0, count: 11) + [1]],
        "lo.parley.test": [[127, 0, 0, 1]],
        "corp.parley.test": [[10, 1, 2, 3]],
        "mixed.parley.test": [[142, 250, 74, 138], [192, 168, 1, 1]],
        "mapped.parley.test": [[UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 169, 254, 169, 254]],
        "empty.parley.test": [],
    ])

    /// Rules 1–3: every address must be outside; any inside one, or none, is inside; a failed
    /// lookup is unresolved; numbers are not looked up.
    @Test func aNameIsAllowedOnlyIfEveryAddressItHasIsOutside() async throws {
        let names = Names(Self.names.table)
        let check = PushHostCheck(allowLoopback: false, resolve: names.resolve)
        func verdict(_ url: String) async -> PushHostCheck.Verdict { await check.verdict(for: URL(string: url)!) }
        #expect(await verdict("https://fcm.parley.test/send/abc") == .outside)
        #expect(await verdict("https://FCM.parley.test:443/send/other") == .outside)
        #expect(await verdict("https://lo.parley.test/x") == .inside)
        #expect(await verdict("https://corp.parley.test/x") == .inside)
        #expect(await verdict("https://mixed.parley.test/x") == .inside, "one inside address is enough")
        #expect(await verdict("https://mapped.parley.test/x") == .inside, "IPv4-mapped link-local")
        #expect(await verdict("https://empty.parley.test/x") == .inside)
        #expect(await verdict("https://nowhere.parley.test/x") == .unresolved)
        #expect(await verdict("https://142.250.74.138/x") == .outside)
        #expect(await verdict("https://[2a00:1450::1]/x") == .outside)
        #expect(names.lookups.load(ordering: .relaxed) == 7, "fcm's answer kept for its second push; numbers not looked up")
    }

    /// Rule 2's exception for tests and local development.
    @Test func loopbackIsAllowedOnlyWhenAsked() async throws {
        let strict = PushHostCheck(allowLoopback: false, resolve: Self.names.resolve)
        let local = PushHostCheck(allowLoopback: true, resolve: Self.names.resolve)
        #expect(await strict.verdict(for: URL(string: "https://lo.parley.test/x")!) == .inside)
        #expect(await local.verdict(for: URL(string: "https://lo.parley.test/x")!) == .outside)
        #expect(await local.verdict(for: URL(string: "https://corp.parley.test/x")!) == .inside)
    }

    /// The system's resolver, for real: `localhost` is loopback (every machine's hosts file says so).
    @Test func theSystemResolverFindsWhereLocalhostIs() async throws {
        let addresses = try await PushHostCheck.systemResolve("localhost")
        #expect(!addresses.isEmpty && addresses.allSatisfy { $0 == [127, 0, 0, 1] || $0 == [UInt8](repeating: 0, count: 15) + [1] })
        #expect(await PushHostCheck(allowLoopback: false).verdict(for: URL(string: "https://localhost/x")!) == .inside)
        await #expect(throws: PushHostCheck.LookupFailed.self) { try await PushHostCheck.systemResolve("no such host.invalid") }
    }

    /// End to end: grace's subscription whose name resolves inside is removed at the first push
    /// (without the check, the request to a name no resolver knows fails to connect, and the
    /// subscription is kept and retried), while her other browser gets the push.
    @Test func aSubscriptionWhoseNameLeadsInsideIsRemovedAtTheFirstPush() async throws {
        try await PushServiceStandIn.run { base, service in
            try await TestServer.run(configure: { configuration in
                configuration.push.allowLoopbackEndpoints = true
                configuration.push.pollInterval = .milliseconds(20)
                configuration.push.resolveHost = Self.names.resolve
            }) { api in
                let ada = try await api.register("ada"), grace = try await api.register("grace")
                let inside = PushServiceStandIn.Browser(name: "inside")
                var body = inside.body(base: base)
                body.endpoint = "https://corp.parley.test/push/inside"
                let subscribed = try await api.request(.post, "/v1/push/subscriptions", token: grace.token, encoding: body)
                #expect(subscribed.status == .noContent, "the name is not looked up when subscribing")
                try await api.subscribe(grace, PushServiceStandIn.Browser(name: "phone"), base: base, service: service)
                let sent = try await api.send("hello", from: ada, to: grace)
                try await eventually("the phone's push") { service.deliveries(to: "phone").count == 1 }
                #expect(service.deliveries(to: "phone").first?.payload.seq == sent.seq)
                try await eventually("the inside subscription removed") {
                    try await api.store.pushSubscriptions(of: grace.id).map(\.endpoint) == ["\(base)/push/phone"]
                }
            }
        }
    }
}
