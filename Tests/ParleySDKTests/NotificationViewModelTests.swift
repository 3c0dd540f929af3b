import Foundation
import ParleyCore
import ParleySDK
import ParleyViewModels
import Testing

/// The chat's and the list's notification state (``ChatViewModel`` "Notifications"), on the fakes.
@MainActor
@Suite struct NotificationViewModelTests {
    @Test func aChatShowsItsMuteAndLevelAsTheServerAnsweredAndTheListMarksIt() async throws {
        let fixture = Fixture()
        let client = try fixture.makeClient()
        let chat = ChatViewModel(client: client, conversation: fixture.conversation, otherUser: fixture.grace)
        #expect(chat.notificationLevel == .all && !chat.isMuted && chat.muteText == nil)
        #expect(chat.notificationLevels == [.all, .none], "nobody but the other person could mention me")

        #expect(await chat.mute(for: .always))
        #expect(chat.isMuted && chat.muteText == "Muted")
        #expect(fixture.api.notifications.conversations.first?.mutedUntil == .forever, "the server holds it")
        #expect(await chat.mute(for: .eightHours))
        #expect(chat.muteText?.hasPrefix("Muted until ") == true)
        #expect(await chat.setNotificationLevel(NotificationLevel.none))
        #expect(chat.notificationLevel == NotificationLevel.none)

        // The list's row carries the mute.
        fixture.api.conversationList = [fixture.summary(lastSeq: 1)]
        await client.reloadConversations()
        let list = ConversationListViewModel(client: client)
        #expect(list.rows.first?.isMuted == true)
        #expect(await chat.mute(for: .off))
        #expect(list.rows.first?.isMuted == false && !chat.isMuted)
        #expect(ChatViewModel(client: client, conversation: .newGroup(), otherUser: nil).notificationLevels == [.all, .mentions, .none])
    }
}
