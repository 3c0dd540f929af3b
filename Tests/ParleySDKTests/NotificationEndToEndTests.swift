import Foundation
import ParleyCore
import ParleySDK
import Testing

/// Notification settings, the badge and device registration through the real SDK against a real
/// server (rules in ``ParleyClient`` "Notifications").
@MainActor
@Suite(.serialized) struct NotificationEndToEndTests {
    @Test func settingsAreTheServersAndTheBadgeCountsWhatIsUnread() async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        for client in [alice, bob] { client.start() }
        _ = try await eventually("both online") { [alice, bob].allSatisfy { $0.connectionState == .online } ? true : nil }
        let direct = ConversationID.direct(aliceSession.user.id, bobSession.user.id)
        for text in ["one", "two", "three"] { try alice.send(text, in: direct, to: bobSession.user.id) }
        _ = try await eventually("bob has them") { bob.timeline(direct).count == 3 ? true : nil }

        // Rule 3: the badge is what is unread.
        _ = try await eventually("bob's badge") { bob.badgeCount == 3 ? true : nil }
        #expect(alice.badgeCount == 0, "her own messages are not unread")

        // Rule 2: each change is the server's answer.
        #expect(try await bob.loadNotificationSettings() == NotificationSettings())
        try await bob.mute(direct, for: .eightHours)
        #expect(bob.isMuted(direct))
        try await bob.setNotificationLevel(.none, for: direct)
        #expect(bob.notificationSetting(of: direct).level == NotificationLevel.none && bob.isMuted(direct))
        try await bob.setNotificationPreview(.sender)
        let fresh = try server.client(bobSession, directory: temporaryDirectory())
        let loaded = try await fresh.loadNotificationSettings()
        #expect(loaded.preview == .sender && loaded.conversations.map(\.level) == [NotificationLevel.none], "another device reads the same")
        try await bob.mute(direct, for: .off)
        try await bob.setNotificationLevel(.all, for: direct)
        #expect(!bob.isMuted(direct) && bob.notificationSettings.conversations.isEmpty)

        // A refused change leaves the local copy as it was.
        await #expect(throws: ParleyClientError.self) { try await bob.mute(.direct(.random(), .random()), for: .always) }
        #expect(bob.notificationSettings.conversations.isEmpty)

        // Device tokens: registered, then unregistered (a second removal finds nothing).
        let token = Data((0..<32).map { UInt8($0) })
        try await bob.registerForPushNotifications(deviceToken: token, environment: .sandbox)
        try await bob.unregisterForPushNotifications(deviceToken: token)
        await #expect(throws: ParleyClientError.self) { try await bob.unregisterForPushNotifications(deviceToken: token) }
        for client in [alice, bob] { client.stop() }
        await server.stop()
    }
}
