import Foundation
import Logging
import HTTPTypes
import NIOCore
import ParleyCore
import ParleyPostgres
@testable import ParleyServer
import ParleyStore
import ParleyTestSupport
import Testing

/// Pushes end to end: a real server, its push queue and dispatcher, and a push service stand-in that
/// decrypts as the browser would (docs/protocol.md "Notifications").
@Suite(.serialized) struct PushDeliveryTests {
    /// The backends every delivery test runs on: a SQLite file, and a single node on PostgreSQL.
    enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
        case sqlite, postgres
        var description: String { rawValue }
    }

    static func run(
        on backend: Backend = .sqlite, _ body: @Sendable @escaping (TestAPI, PushServiceStandIn, String) async throws -> Void
    ) async throws {
        let configure: @Sendable (inout ServerConfiguration) -> Void = { configuration in
            configuration.push.allowLoopbackEndpoints = true
            configuration.push.pollInterval = .milliseconds(20)
            // Longer than any test waits: a push that hangs holds its slot until a test releases it.
            configuration.push.requestTimeout = .seconds(60)
        }
        try await PushServiceStandIn.run { base, service in
            switch backend {
            case .sqlite:
                try await TestServer.run(configure: configure) { api in try await body(api, service, base) }
            case .postgres:
                let url = try DatabaseURL(try await PostgresTestServer.freshDatabaseAsync())
                let store = try await PostgresStore.connect(url, poolSize: 4, logger: Logger(label: "test"))
                try await TestServer.run(store: store, configure: configure) { api in try await body(api, service, base) }
            }
        }
    }

    @Test(arguments: Backend.allCases) func anOfflineMemberIsPushedAndAnOnlineOneIsNot(backend: Backend) async throws {
        try await Self.run(on: backend) { api, service, base in
            let ada = try await api.register("ada", displayName: "Ada Lovelace"), grace = try await api.register("grace")
            let chat = try await api.send("hello", from: ada, to: grace).conversationId
            _ = try await api.send("hi", from: grace, in: chat)  // presence is shared once both have written
            let browser = PushServiceStandIn.Browser(name: "grace-laptop")
            try await api.subscribe(grace, browser, base: base, service: service)

            // Online: the app shows it; the queue moves past it without a push.
            let watcher = try await api.socket(ada), phone = try await api.socket(grace)
            _ = try await phone.synced()
            let seen = try await api.send("are you there?", from: ada, in: chat)
            _ = try await phone.message(seq: seen.seq)
            try await api.pushed(grace)
            #expect(service.deliveries.isEmpty)

            // Offline: one push, decrypted by the browser's keys, worded in full; the badge counts
            // both unread messages (the phone received the first but never read it).
            await phone.close()
            _ = try await watcher.presence(grace.id, online: false)
            let missed = try await api.send("call me", from: ada, in: chat)
            try await eventually("a push") { !service.deliveries.isEmpty }
            let delivery = try #require(service.deliveries.first)
            #expect(
                delivery.payload
                    == PushPayload(
                        kind: .message, conversationId: chat, seq: missed.seq, title: "Ada Lovelace", body: "call me", count: 1, badge: 2,
                        url: "/#/c/\(chat.rawValue)"))
            #expect(delivery.headers[HTTPField.Name("Urgency")!] == "high")
            #expect(delivery.headers[HTTPField.Name("Topic")!] == WebPushSender.topic(chat.rawValue), "one topic per conversation: they collapse")
            #expect(service.problems.isEmpty)
            await watcher.close()
        }
    }

    @Test(arguments: Backend.allCases) func levelsMutesAndMentionsDecideWhatAGroupPushes(backend: Backend) async throws {
        try await Self.run(on: backend) { api, service, base in
            let (ada, grace, alan) = try await api.threeFriends()
            guard let group = try await api.createGroup(by: ada, title: "Trip", members: [grace, alan]).conversation?.id else { throw TestFailure("no group") }
            let browser = PushServiceStandIn.Browser(name: "grace")
            try await api.subscribe(grace, browser, base: base, service: service)
            #expect(try await api.notify(grace, in: group, ConversationNotificationChange(level: .mentions)).level == .mentions)

            _ = try await api.send("lunch at 12?", from: ada, in: group)
            let mention = try await api.send("@grace are you in?", from: alan, in: group)
            try await eventually("the mention's push") { service.deliveries.contains { $0.payload.seq == mention.seq } }
            #expect(service.deliveries.map(\.payload.body) == ["Alan: @grace are you in?"], "only the mention, not the message before it")
            #expect(service.deliveries.first?.payload.title == "Trip" && service.deliveries.first?.payload.count == 1)

            // Muted: not even a mention.
            let muted = try await api.notify(grace, in: group, ConversationNotificationChange(mute: .always))
            #expect(muted.mutedUntil == .forever && muted.level == .mentions)
            _ = try await api.send("@grace??", from: alan, in: group)
            try await api.pushed(grace)
            #expect(service.deliveries.count == 1)

            // Unmuted, every message, sender-only wording.
            _ = try await api.notify(grace, in: group, ConversationNotificationChange(level: .all, mute: .off))
            #expect(try await api.request(.put, "/v1/notifications", token: grace.token, encoding: NotificationPreviewChange(preview: .sender)).status == .ok)
            let plain = try await api.send("see you there", from: ada, in: group)
            try await eventually("the next push") { service.deliveries.count == 2 }
            #expect(service.deliveries.last?.payload.seq == plain.seq && service.deliveries.last?.payload.body == "New message from Ada")
            let settings = try await api.request(.get, "/v1/notifications", token: grace.token).decode(NotificationSettings.self)
            #expect(settings == NotificationSettings(preview: .sender, conversations: []), "back to the default: not listed")
        }
    }

    /// ``PushSenderNames``: a member named like another (a Cyrillic А) is named apart in a group's
    /// pushes, as the clients name them; names that differ stay bare.
    @Test func aGroupPushTellsLookAlikeSendersApartByUsername() async throws {
        try await Self.run { api, service, base in
            let ada = try await api.register("ada", displayName: "Ada Lovelace"), grace = try await api.register("grace")
            let impostor = try await api.register("ada_cyr", displayName: "Аda Lovelace"), alan = try await api.register("alan", displayName: "Alan")
            for friend in [grace, impostor, alan] {
                _ = try await api.send("hi", from: ada, to: friend)
                _ = try await api.send("hi!", from: friend, to: ada)
            }
            let created = try await api.createGroup(by: ada, title: "Office", members: [grace, impostor, alan])
            guard let group = created.conversation?.id else { throw TestFailure("no group") }
            try await api.subscribe(grace, PushServiceStandIn.Browser(name: "grace"), base: base, service: service)
            for (sender, text) in [(impostor, "send me the code"), (ada, "don't!"), (alan, "?")] {
                let sent = try await api.send(text, from: sender, in: group)
                try await eventually("the push of \(text)") { service.deliveries.contains { $0.payload.seq == sent.seq } }
            }
            #expect(service.deliveries.map(\.payload.body) == ["Аda Lovelace (@ada_cyr): send me the code", "Ada Lovelace (@ada): don't!", "Alan: ?"])
        }
    }

    @Test(arguments: Backend.allCases) func anEditUpdatesADeleteWithdrawsAndReadingElsewhereTakesItBack(backend: Backend) async throws {
        try await Self.run(on: backend) { api, service, base in
            let ada = try await api.register("ada"), grace = try await api.register("grace")
            let chat = try await api.send("first", from: ada, to: grace).conversationId
            try await api.subscribe(grace, PushServiceStandIn.Browser(name: "grace"), base: base, service: service)
            let typo = try await api.send("meet at teh station", from: ada, in: chat)
            try await eventually("the push") { service.deliveries.count == 1 }
            let edit = API.MessageActionBody(clientId: .random(), kind: .edit, text: "meet at the station")
            #expect(try await api.act(ada, typo.seq, in: chat, edit).status == .ok)
            try await eventually("the update") { service.deliveries.count == 2 }
            #expect(service.deliveries[1].payload.kind == .update && service.deliveries[1].payload.body == "meet at the station")
            #expect(service.deliveries[1].payload.seq == typo.seq && service.deliveries[1].headers[HTTPField.Name("Urgency")!] == "normal")
            #expect(service.deliveries[1].headers[HTTPField.Name("Topic")!] == nil, "a topic would replace the message push it updates")
            #expect(try await api.act(ada, typo.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .delete)).status == .ok)
            try await eventually("the withdrawal") { service.deliveries.count == 3 }
            #expect(service.deliveries[2].payload.kind == .withdraw && service.deliveries[2].payload.seq == typo.seq)

            // A new one, then Grace reads it on her phone: the laptop's notification goes.
            let next = try await api.send("are you coming?", from: ada, in: chat)
            try await eventually("the push") { service.deliveries.count == 4 }
            let read = try await api.request(.post, "/v1/conversations/\(chat.rawValue)/receipts", token: grace.token, json: #"{"readSeq":\#(next.seq)}"#)
            #expect(read.status == .ok)
            try await eventually("the read push") { service.deliveries.count == 5 }
            #expect(service.deliveries[4].payload.kind == .read && service.deliveries[4].payload.seq == next.seq)
        }
    }

    @Test func aGoneSubscriptionIsRemovedAndABusyServiceIsRetried() async throws {
        try await Self.run { api, service, base in
            let ada = try await api.register("ada"), grace = try await api.register("grace"), alan = try await api.register("alan")
            try await api.subscribe(grace, PushServiceStandIn.Browser(name: "grace"), base: base, service: service)
            try await api.subscribe(alan, PushServiceStandIn.Browser(name: "alan"), base: base, service: service)
            service.answer("grace", with: [410])
            service.answer("alan", with: [503, 429])
            _ = try await api.send("hi grace", from: ada, to: grace)
            let toAlan = try await api.send("hi alan", from: ada, to: alan)
            try await eventually("grace's subscription removed") { try await api.store.pushSubscriptions(of: grace.id).isEmpty }
            // Two refusals, then delivered after the backoff (2 s, then 4 s).
            try await eventually("alan's push after two retries", within: .seconds(30)) { !service.deliveries(to: "alan").isEmpty }
            #expect(service.deliveries(to: "alan").map(\.payload.seq) == [toAlan.seq])
            #expect(service.deliveries(to: "grace").isEmpty)
        }
    }
}

extension PushDeliveryTests {
    /// A push service that never answers holds its own users' pushes, not the others', and never a send.
    @Test func aHangingPushServiceHoldsNeitherSendsNorOtherUsersPushes() async throws {
        try await Self.run { api, service, base in
            let ada = try await api.register("ada"), grace = try await api.register("grace"), alan = try await api.register("alan")
            try await api.subscribe(grace, PushServiceStandIn.Browser(name: "grace"), base: base, service: service)
            try await api.subscribe(alan, PushServiceStandIn.Browser(name: "alan"), base: base, service: service)
            service.hold("grace")
            _ = try await api.send("to grace", from: ada, to: grace)
            try await eventually("grace's push to hang") { service.heldRequests == 1 }
            let clock = ContinuousClock()
            var sent: Message?
            let took = try await clock.measure { sent = try await api.send("to alan", from: ada, to: alan) }
            // A send held by the push would wait its 60-s request timeout; a loaded machine is slow, not that slow.
            #expect(took < .seconds(20), "a send is never held by a push service")
            try await eventually("alan's push while grace's hangs", within: .seconds(10)) { service.deliveries(to: "alan").count == 1 }
            #expect(service.deliveries(to: "alan").first?.payload.seq == sent?.seq)
            #expect(service.heldRequests == 1 && service.deliveries(to: "grace").isEmpty)
            service.releaseHeld()
            try await eventually("grace's push once answered") { service.deliveries(to: "grace").count == 1 }
        }
    }
}

extension TestAPI {
    /// Registers `browser` as `account`'s Web Push subscription on the stand-in.
    func subscribe(_ account: Account, _ browser: PushServiceStandIn.Browser, base: String, service: PushServiceStandIn) async throws {
        service.add(browser)
        let response = try await request(.post, "/v1/push/subscriptions", token: account.token, encoding: browser.body(base: base))
        guard response.status == .noContent else { throw TestFailure("subscribe: \(response.status) \(String(buffer: response.body))") }
    }

    func notify(_ account: Account, in conversation: ConversationID, _ change: ConversationNotificationChange) async throws -> ConversationNotificationSetting {
        try await request(.put, "/v1/conversations/\(conversation.rawValue)/notifications", token: account.token, encoding: change)
            .decode(ConversationNotificationSetting.self)
    }

    /// Waits until the push queue has covered everything in `account`'s stream.
    func pushed(_ account: Account) async throws {
        let head = try await store.streamHead(of: account.id)
        try await eventually("the push cursor at \(head)") { try await store.pushCursor(of: account.id) ?? 0 >= head }
    }
}
