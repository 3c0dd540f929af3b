import ParleyCore
import ParleyStore
import Testing

/// ``PushQueueStore``'s rules on every backend.
@Suite struct PushQueueConformanceTests {
    static func subscription(_ endpoint: String) -> PushSubscriptionRecord {
        PushSubscriptionRecord(
            endpoint: endpoint, p256dh: [4] + [UInt8](repeating: 7, count: 64), auth: [UInt8](repeating: 7, count: 16), createdAt: .now())
    }

    @Test(arguments: StoreBackend.all)
    func pushesStartAtTheFirstTargetAndEachUserIsLeasedToOneNode(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace"), eve = try await store.makeUser("eve")
        _ = try await store.send("before any target", from: ada.id, to: .user(grace.id))
        let now = Timestamp.now(), lease = now.adding(seconds: 60)
        #expect(try await store.claimPushWork(node: "a", now: now, leaseUntil: lease, limit: 10).isEmpty, "nobody has a target")

        // Rule 1: Grace's cursor starts at her head: the earlier message is never pushed.
        try await store.savePushSubscription(Self.subscription("https://push.example.net/grace"), for: grace.id, limit: 5)
        let head = try await store.streamHead(of: grace.id)
        #expect(try await store.claimPushWork(node: "a", now: now, leaseUntil: lease, limit: 10).isEmpty, "nothing new yet")
        _ = try await store.send("one", from: ada.id, to: .user(grace.id))
        _ = try await store.send("to eve, who has no target", from: ada.id, to: .user(eve.id))

        // Rule 2: claimed once; another node sees nobody while the lease holds, and takes over after it.
        let claimed = try await store.claimPushWork(node: "a", now: now, leaseUntil: lease, limit: 10)
        #expect(claimed == [PushWork(user: grace.id, pushedPosition: head, attempts: 0)])
        #expect(try await store.claimPushWork(node: "b", now: now, leaseUntil: lease, limit: 10).isEmpty)
        let later = lease.adding(seconds: 1)
        #expect(try await store.claimPushWork(node: "b", now: later, leaseUntil: later.adding(seconds: 60), limit: 10).map(\.user) == [grace.id])

        // Rule 3: node a lost the lease, so its finish moves nothing; b's does, and records the notification.
        let conversation = ConversationID.direct(ada.id, grace.id)
        #expect(try await store.finishPushWork(of: grace.id, node: "a", upTo: head + 1, notified: [conversation: 2]) == false)
        #expect(try await store.pushNotified(of: grace.id).isEmpty)
        #expect(try await store.finishPushWork(of: grace.id, node: "b", upTo: head + 1, notified: [conversation: 2]))
        #expect(try await store.pushNotified(of: grace.id) == [conversation: 2])
        #expect(try await store.claimPushWork(node: "a", now: later, leaseUntil: later.adding(seconds: 60), limit: 10).isEmpty)
        // A cursor never moves back.
        _ = try await store.send("two", from: ada.id, to: .user(grace.id))
        let again = try await store.claimPushWork(node: "a", now: later, leaseUntil: later.adding(seconds: 60), limit: 10)
        #expect(again.map(\.pushedPosition) == [head + 1])
        #expect(try await store.finishPushWork(of: grace.id, node: "a", upTo: head, notified: [conversation: nil]))
        #expect(try await store.pushNotified(of: grace.id).isEmpty, "nil forgets the notification")
        let retaken = try await store.claimPushWork(node: "a", now: later, leaseUntil: later, limit: 10)
        #expect(retaken.map(\.pushedPosition) == [head + 1])

        // Rule 4: a retry hides the user until its time and counts the attempt.
        try await store.retryPushWork(of: grace.id, node: "a", at: later.adding(seconds: 30))
        #expect(try await store.claimPushWork(node: "a", now: later.adding(seconds: 29), leaseUntil: later.adding(seconds: 90), limit: 10).isEmpty)
        let retried = try await store.claimPushWork(node: "a", now: later.adding(seconds: 30), leaseUntil: later.adding(seconds: 90), limit: 10)
        #expect(retried.map(\.attempts) == [1])

        // Without targets nobody is claimed; a new first target starts again at the head (no backlog).
        #expect(try await store.deletePushSubscription(endpoint: "https://push.example.net/grace", of: grace.id))
        let far = later.adding(seconds: 1_000)
        #expect(try await store.claimPushWork(node: "a", now: far, leaseUntil: far.adding(seconds: 60), limit: 10).isEmpty)
        try await store.saveAPNsToken(APNsDeviceRecord(token: String(repeating: "ab", count: 32), sandbox: true, createdAt: .now()), for: grace.id, limit: 5)
        #expect(try await store.claimPushWork(node: "a", now: far, leaseUntil: far.adding(seconds: 60), limit: 10).isEmpty)
        _ = try await store.send("three", from: ada.id, to: .user(grace.id))
        let fresh = try await store.claimPushWork(node: "a", now: far, leaseUntil: far.adding(seconds: 60), limit: 10)
        #expect(fresh == [PushWork(user: grace.id, pushedPosition: try await store.streamHead(of: grace.id) - 1, attempts: 0)])
    }

    @Test(arguments: StoreBackend.all)
    func apnsDevicesBelongToOneUserAndEachKeepsTheirNewest(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        func device(_ digit: Character, at milliseconds: Int64, sandbox: Bool = false) -> APNsDeviceRecord {
            APNsDeviceRecord(token: String(repeating: digit, count: 64), sandbox: sandbox, createdAt: Timestamp(milliseconds: milliseconds))
        }
        try await store.saveAPNsToken(device("1", at: 1_000), for: ada.id, limit: 2)
        try await store.saveAPNsToken(device("2", at: 2_000, sandbox: true), for: ada.id, limit: 2)
        try await store.saveAPNsToken(device("3", at: 3_000), for: ada.id, limit: 2)
        #expect(try await store.apnsTokens(of: ada.id) == [device("3", at: 3_000), device("2", at: 2_000, sandbox: true)])
        try await store.saveAPNsToken(device("3", at: 4_000), for: grace.id, limit: 2)
        #expect(try await store.apnsTokens(of: ada.id).map(\.token) == [String(repeating: "2", count: 64)], "a device signed in as Grace is hers")
        #expect(try await store.deleteAPNsToken(String(repeating: "3", count: 64), of: ada.id) == false)
        try await store.dropAPNsToken(String(repeating: "3", count: 64))
        #expect(try await store.apnsTokens(of: grace.id).isEmpty)
    }

    @Test(arguments: StoreBackend.all)
    func notificationSettingsArePerMemberAndTheDefaultIsNotStored(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace"), eve = try await store.makeUser("eve")
        let sent = try await store.send("hi", from: ada.id, to: .user(grace.id))
        let conversation = sent.message.conversationId
        let now = Timestamp(milliseconds: 1_000_000)
        #expect(try await store.notificationSettings(of: grace.id) == NotificationSettings())

        let muted = try await store.changeNotificationSetting(.init(mute: .eightHours), in: conversation, for: grace.id, now: now)
        #expect(
            muted == ConversationNotificationSetting(conversationId: conversation, level: .all, mutedUntil: Timestamp(milliseconds: 1_000_000 + 8 * 3_600_000)))
        let both = try await store.changeNotificationSetting(.init(level: .mentions, mute: .always), in: conversation, for: grace.id, now: now)
        #expect(both.level == .mentions && both.mutedUntil == .forever)
        try await store.setNotificationPreview(.sender, for: grace.id)
        #expect(try await store.notificationSettings(of: grace.id) == NotificationSettings(preview: .sender, conversations: [both]))
        #expect(try await store.notificationSettings(of: ada.id) == NotificationSettings(), "Ada's are her own")

        // Back to the default: nothing stored.
        _ = try await store.changeNotificationSetting(.init(level: .all, mute: .off), in: conversation, for: grace.id, now: now)
        #expect(try await store.notificationSettings(of: grace.id).conversations.isEmpty)

        // Not a member: the same "not found" as any other conversation route.
        await #expect(throws: StoreError.conversationNotFound) {
            _ = try await store.changeNotificationSetting(.init(level: NotificationLevel.none), in: conversation, for: eve.id, now: now)
        }
    }

    @Test(arguments: StoreBackend.all)
    func theFirstStoredSecretIsEveryonesSecret(backend: StoreBackend) async throws {
        let store = try await backend.make()
        #expect(try await store.sharedSecret(named: "vapid", orStore: "first") == "first")
        #expect(try await store.sharedSecret(named: "vapid", orStore: "second") == "first")
        #expect(try await store.sharedSecret(named: "other", orStore: "second") == "second")
    }
}

/// The badge's count and the pushes' titles, on every backend.
@Suite struct PushBadgeConformanceTests {
    @Test(arguments: StoreBackend.all)
    func theUnreadTotalIsTheSumOfTheSummariesUnreadCounts(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let (store, ada, grace, alan) = (world.store, world.ada, world.grace, world.alan)
        #expect(try await store.unreadTotal(of: grace.id) == 0)
        // Direct: three from Ada, one deleted by her, one Grace hid; Grace's own never counts.
        var seqs: [Int64] = []
        for text in ["one", "two", "three"] { seqs.append(try await store.send(text, from: ada.id, to: .conversation(world.direct)).message.seq) }
        _ = try await world.act(ada, seqs[0], .delete)
        _ = try await world.act(grace, seqs[1], .hide)
        // A group: entries never count, Alan's message does, Grace's own does not.
        let group = try await world.group(with: [grace.id, alan.id])
        _ = try await store.send("from alan", from: alan.id, to: .conversation(group))
        _ = try await store.send("@grace hi", from: ada.id, to: .conversation(group))
        let summaries = try await store.conversations(of: grace.id, limit: 50, before: nil)
        let summed = summaries.reduce(0) { $0 + Int($1.unreadCount) }
        #expect(try await store.unreadTotal(of: grace.id) == summed)
        #expect(summed == 3, "'three' in the direct chat and two in the group")
        // Reading moves it; the sender's own count never included her messages.
        _ = try await store.updateReceipt(
            in: group, member: grace.id, deliveredSeq: nil, readSeq: try await store.conversation(group, as: grace.id).lastSeq, now: .now())
        #expect(try await store.unreadTotal(of: grace.id) == 1)
        #expect(
            try await store.unreadTotal(of: ada.id) == Int(try await store.conversations(of: ada.id, limit: 50, before: nil).reduce(0) { $0 + $1.unreadCount }))
        #expect(try await store.groupTitles([group, world.direct]) == [group: "Group"], "a direct conversation has no title")
    }
}

/// Rule 2's restarts, on every backend.
@Suite struct PushLeaseConformanceTests {
    @Test(arguments: StoreBackend.all)
    func aNodeRestartingUnderItsNameTakesBackWhatItHeldAndNoOneElseDoes(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let ada = try await store.makeUser("ada"), grace = try await store.makeUser("grace")
        try await store.savePushSubscription(PushQueueConformanceTests.subscription("https://push.example.net/g"), for: grace.id, limit: 5)
        _ = try await store.send("hi", from: ada.id, to: .user(grace.id))
        let now = Timestamp.now(), lease = now.adding(seconds: 60)
        #expect(try await store.claimPushWork(node: "host:8080#one", now: now, leaseUntil: lease, limit: 5).map(\.user) == [grace.id])
        #expect(try await store.claimPushWork(node: "host:8080#one", now: now, leaseUntil: lease, limit: 5).isEmpty, "not twice to the same incarnation")
        #expect(try await store.claimPushWork(node: "host:8081#two", now: now, leaseUntil: lease, limit: 5).isEmpty, "another node waits for the lease")
        #expect(
            try await store.claimPushWork(node: "host:80#two", now: now, leaseUntil: lease, limit: 5).isEmpty, "a name that is only a prefix is another node")
        #expect(try await store.claimPushWork(node: "host:8080#two", now: now, leaseUntil: lease, limit: 5).map(\.user) == [grace.id], "restarted")
        #expect(try await store.finishPushWork(of: grace.id, node: "host:8080#one", upTo: 99, notified: [:]) == false, "the dead one's finish moves nothing")
    }
}
