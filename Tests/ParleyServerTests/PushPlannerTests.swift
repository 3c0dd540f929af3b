import Foundation
import ParleyCore
@testable import ParleyServer
import Testing

/// ``PushPlanner``'s rules, one test each.
@Suite struct PushPlannerTests {
    let grace = UserID(rawValue: "grace"), ada = UserID(rawValue: "ada"), eve = UserID(rawValue: "eve")
    let group = ConversationID(rawValue: "grp_1")
    var direct: ConversationID { .direct(ada, grace) }
    let now = Timestamp(milliseconds: 10_000_000)

    func message(_ seq: Int64, in conversation: ConversationID, from sender: UserID, _ text: String = "hi", mentions: [UserID]? = nil) -> Message {
        Message(
            id: .random(), conversationId: conversation, seq: seq, senderId: sender, clientId: .random(), text: text, createdAt: now, mentions: mentions)
    }

    func planner(
        online: Bool = false, preview: NotificationPreview = .full, settings: [ConversationNotificationSetting] = [], notified: [ConversationID: Int64] = [:]
    )
        -> PushPlanner
    {
        PushPlanner(
            user: grace, settings: Dictionary(uniqueKeysWithValues: settings.map { ($0.conversationId, $0) }), preview: preview, online: online,
            now: now, notified: notified)
    }

    func plan(_ planner: PushPlanner, _ payloads: [StreamEvent.Payload]) -> PushPlanner.Plan {
        let events = payloads.enumerated().map { StreamEvent(position: Int64($0.offset + 1), payload: $0.element) }
        return planner.plan(events, name: { $0.rawValue.capitalized }, title: { $0.isGroup ? "Trip" : nil }, badge: 3)
    }

    @Test func aMessagesFilesSayWhatTheyAreBeforeItsCaption() {
        func with(_ kinds: [AttachmentKind], _ text: String) -> Message {
            var message = message(1, in: direct, from: ada, text)
            message.attachments = kinds.map { Attachment(id: .random(), name: "notes.pdf", mimeType: "application/pdf", kind: $0, size: 1) }
            return message
        }
        #expect(PushPlanner.shownText(with([.image], "")) == "📷 Photo")
        #expect(PushPlanner.shownText(with([.image, .image], "the beach")) == "📷 2 photos: the beach")
        #expect(PushPlanner.shownText(with([.file], "")) == "📎 notes.pdf")
        #expect(PushPlanner.shownText(with([.video], "")) == "🎥 Video")
        #expect(PushPlanner.shownText(with([], "plain")) == "plain")
        // A direction override reorders nothing in a notification ("file exe.jpg" it would read).
        #expect(PushPlanner.shownText(with([], "file \u{202E}gpj.exe")) == "file \u{200B}gpj.exe")
        #expect(PushPlanner.shownText(with([.file], "\u{202D}x")) == "📎 notes.pdf: \u{200B}x")
    }

    @Test func rule1OnlyOthersMessagesAlertAndOnlyWhileOfflineAndAllowed() {
        let entry = Message(
            id: .random(), conversationId: group, seq: 2, senderId: ada, clientId: .random(), text: "", createdAt: now,
            entry: GroupEntry(type: .renamed, title: "Trip"))
        let events: [StreamEvent.Payload] = [.message(message(1, in: direct, from: grace)), .message(entry)]
        #expect(plan(planner(), events).pushes.isEmpty, "my own message and a group entry never alert")
        #expect(plan(planner(online: true), [.message(message(1, in: direct, from: ada))]).pushes.isEmpty, "online: the app shows it")
        let muted = ConversationNotificationSetting(conversationId: direct, mutedUntil: Timestamp(milliseconds: now.milliseconds + 1))
        #expect(plan(planner(settings: [muted]), [.message(message(1, in: direct, from: ada))]).pushes.isEmpty)
        let expired = ConversationNotificationSetting(conversationId: direct, mutedUntil: now)
        #expect(plan(planner(settings: [expired]), [.message(message(1, in: direct, from: ada))]).pushes.count == 1, "a mute that ran out")
        let mentionsOnly = ConversationNotificationSetting(conversationId: group, level: .mentions)
        let onlyMention = plan(
            planner(settings: [mentionsOnly]),
            [.message(message(1, in: group, from: ada, "lunch?")), .message(message(2, in: group, from: eve, "@grace?", mentions: [grace]))])
        #expect(onlyMention.pushes.map(\.seq) == [2])
        #expect(onlyMention.pushes.first?.count == 1, "the count is of the messages that notify")
        let nothing = ConversationNotificationSetting(conversationId: group, level: .none)
        #expect(plan(planner(settings: [nothing]), [.message(message(1, in: group, from: ada, mentions: [grace]))]).pushes.isEmpty)
    }

    @Test func rule2AConversationsMessagesCollapseIntoItsNewest() {
        var events: [StreamEvent.Payload] = (1...50).map { .message(message($0, in: direct, from: ada, "m\($0)")) }
        events.append(.message(message(1, in: group, from: eve, "in the group")))
        let result = plan(planner(), events)
        #expect(
            result.pushes == [
                PushPayload(kind: .message, conversationId: direct, seq: 50, title: "Ada", body: "m50", count: 50, badge: 3, url: "/#/c/\(direct.rawValue)"),
                PushPayload(kind: .message, conversationId: group, seq: 1, title: "Trip", body: "Eve: in the group", count: 1, badge: 3, url: "/#/c/grp_1"),
            ])
        #expect(result.notified == [direct: 50, group: 1])
        // Read (on another device) or deleted before the push: nothing to alert.
        let read = plan(
            planner(),
            [.message(message(1, in: direct, from: ada)), .receipt(ReceiptUpdate(conversationId: direct, userId: grace, deliveredSeq: 1, readSeq: 1))])
        #expect(read.pushes.isEmpty)
        var deleted = message(1, in: direct, from: ada)
        deleted.deletedAt = now
        #expect(plan(planner(), [.message(message(1, in: direct, from: ada)), .messageUpdated(deleted)]).pushes.isEmpty)
        // The newest deleted before the push: the one before it is the push.
        var newest = message(2, in: direct, from: ada, "oops")
        let kept = plan(
            planner(),
            [
                .message(message(1, in: direct, from: ada, "lunch?")), .message(newest),
                .messageUpdated(
                    {
                        newest.deletedAt = now; return newest
                    }()),
            ])
        #expect(kept.pushes.map { "\($0.seq) \($0.body) ×\($0.count ?? 0)" } == ["1 lunch? ×1"])
        // Edited before the push: the push says what it says now.
        let edited = message(1, in: direct, from: ada, "fixed")
        #expect(plan(planner(), [.message(message(1, in: direct, from: ada, "fxied")), .messageUpdated(edited)]).pushes.map(\.body) == ["fixed"])
    }

    @Test func rule3EditsDeletesAndReadsTidyUpWhatIsShownEvenWhileOnline() {
        let shown = planner(online: true, notified: [direct: 4])
        let edit = plan(shown, [.messageUpdated(message(4, in: direct, from: ada, "better"))])
        #expect(edit.pushes.map(\.kind) == [.update] && edit.pushes.first?.body == "better" && edit.notified.isEmpty)
        #expect(plan(shown, [.messageUpdated(message(3, in: direct, from: ada))]).pushes.isEmpty, "not the shown message")
        var deleted = message(4, in: direct, from: ada)
        deleted.deletedAt = now
        let withdraw = plan(shown, [.messageUpdated(deleted)])
        #expect(withdraw.pushes.map(\.kind) == [.withdraw] && withdraw.notified == [direct: Int64?.none])
        let read = plan(shown, [.receipt(ReceiptUpdate(conversationId: direct, userId: grace, deliveredSeq: 5, readSeq: 5))])
        #expect(read.pushes.map(\.kind) == [.read] && read.pushes.first?.seq == 5 && read.notified == [direct: Int64?.none])
        #expect(plan(shown, [.receipt(ReceiptUpdate(conversationId: direct, userId: grace, deliveredSeq: 3, readSeq: 3))]).pushes.isEmpty, "not yet past it")
        #expect(plan(shown, [.receipt(ReceiptUpdate(conversationId: direct, userId: ada, deliveredSeq: 9, readSeq: 9))]).pushes.isEmpty, "someone else's")
        #expect(plan(shown, [.message(message(6, in: direct, from: grace))]).pushes.map(\.kind) == [.read], "writing there means reading")
        #expect(
            plan(planner(online: true), [.receipt(ReceiptUpdate(conversationId: direct, userId: grace, deliveredSeq: 5, readSeq: 5))]).pushes.isEmpty,
            "nothing shown, nothing to take back")
    }

    @Test func rule4AnInvitationAlertsWithTheGroupsTitle() {
        let invitation = Invitation(
            conversationId: group, title: "Trip", inviter: User(id: ada, username: "ada", displayName: "Ada", createdAt: now), memberCount: 3, createdAt: now)
        #expect(plan(planner(), [.invitation(invitation)]).pushes.map { "\($0.title): \($0.body)" } == ["Trip: Ada invited you"])
        #expect(plan(planner(preview: .none), [.invitation(invitation)]).pushes.map { "\($0.title): \($0.body)" } == ["Parley: New message"])
        #expect(plan(planner(online: true), [.invitation(invitation)]).pushes.isEmpty)
    }

    @Test func rule5WordingFollowsThePreviewLevel() {
        let long = String(repeating: "é", count: 400)
        let events: [StreamEvent.Payload] = [.message(message(1, in: direct, from: ada, long)), .message(message(1, in: group, from: eve, "plans"))]
        func words(_ preview: NotificationPreview) -> [String] { plan(planner(preview: preview), events).pushes.map { "\($0.title) | \($0.body)" } }
        #expect(words(.full) == ["Ada | " + String(repeating: "é", count: PushPlanner.maxTextCharacters - 1) + "…", "Trip | Eve: plans"])
        #expect(words(.sender) == ["Ada | New message", "Trip | New message from Eve"])
        #expect(words(.none) == ["Parley | New message", "Parley | New message"])
    }
}
