import ParleyCore
import ParleyStore
import Testing

/// ``PushSubscriptionStore``'s rules on every backend.
@Suite struct PushSubscriptionConformanceTests {
    static func subscription(_ endpoint: String, at milliseconds: Int64, key: UInt8 = 4) -> PushSubscriptionRecord {
        PushSubscriptionRecord(
            endpoint: endpoint, p256dh: [4] + [UInt8](repeating: key, count: 64), auth: [UInt8](repeating: key, count: 16),
            createdAt: Timestamp(milliseconds: milliseconds))
    }

    @Test(arguments: StoreBackend.all)
    func anEndpointBelongsToOneUserAndEachKeepsTheirNewest(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        let laptop = "https://push.example.net/wpush/laptop", phone = "https://push.example.net/wpush/phone"
        try await store.savePushSubscription(Self.subscription(laptop, at: 1_000), for: ada.id, limit: 3)
        try await store.savePushSubscription(Self.subscription(phone, at: 2_000), for: ada.id, limit: 3)
        #expect(try await store.pushSubscriptions(of: ada.id).map(\.endpoint) == [phone, laptop], "newest first")
        #expect(try await store.pushSubscriptions(of: ada.id).first == Self.subscription(phone, at: 2_000), "keys kept byte for byte")

        // Rule 1: the laptop's browser signs in as Grace; its keys change too.
        try await store.savePushSubscription(Self.subscription(laptop, at: 3_000, key: 9), for: grace.id, limit: 3)
        #expect(try await store.pushSubscriptions(of: ada.id).map(\.endpoint) == [phone])
        #expect(try await store.pushSubscriptions(of: grace.id) == [Self.subscription(laptop, at: 3_000, key: 9)])

        // Rule 2: at most `limit`, the oldest go.
        for index in 0..<4 {
            try await store.savePushSubscription(Self.subscription("https://push.example.net/wpush/\(index)", at: 10_000 + Int64(index)), for: ada.id, limit: 3)
        }
        #expect(try await store.pushSubscriptions(of: ada.id).map(\.endpoint) == (1...3).reversed().map { "https://push.example.net/wpush/\($0)" })

        // Rule 3: only one's own; a push service's "gone" removes it whoever held it.
        #expect(try await store.deletePushSubscription(endpoint: laptop, of: ada.id) == false)
        #expect(try await store.pushSubscriptions(of: grace.id).count == 1)
        #expect(try await store.deletePushSubscription(endpoint: laptop, of: grace.id))
        #expect(try await store.pushSubscriptions(of: grace.id).isEmpty)
        try await store.dropPushSubscription(endpoint: "https://push.example.net/wpush/3")
        try await store.dropPushSubscription(endpoint: "https://push.example.net/wpush/none")
        #expect(try await store.pushSubscriptions(of: ada.id).map(\.endpoint).count == 2)
    }
}
