import Foundation
import ParleyCore
import ParleySDK
import ParleyViewModels
import Testing

/// The words of groups (``GroupText``) and the status rule of my messages (``MessageStatus/ofMine(seq:in:me:)``).
@Suite struct GroupTextTests {
    let ada = UserID.random(), grace = UserID.random(), alan = UserID.random(), me = UserID.random()
    var names: [UserID: String] { [ada: "Ada", grace: "Grace", alan: "Alan"] }

    func lines(_ entry: GroupEntry, by actor: UserID) -> [String] {
        GroupText.entryLines(entry, by: actor, me: me) { names[$0] }
    }

    @Test func everyEntryReadsAsASentence() {
        #expect(
            lines(GroupEntry(type: .created, userIds: [grace, alan], title: "Trip"), by: ada) == ["Ada created the group “Trip”", "Ada added Grace and Alan"])
        #expect(lines(GroupEntry(type: .created, title: "Solo"), by: ada) == ["Ada created the group “Solo”"])
        #expect(lines(GroupEntry(type: .added, userIds: [grace]), by: ada) == ["Ada added Grace"])
        #expect(lines(GroupEntry(type: .joined), by: grace) == ["Grace joined"])
        #expect(lines(GroupEntry(type: .removed, userIds: [grace]), by: ada) == ["Ada removed Grace"])
        #expect(lines(GroupEntry(type: .left), by: grace) == ["Grace left"])
        #expect(lines(GroupEntry(type: .left, userIds: [alan], role: .owner), by: ada) == ["Ada left", "Alan is now the owner"])
        #expect(lines(GroupEntry(type: .role, userIds: [grace], role: .admin), by: ada) == ["Ada made Grace an admin"])
        #expect(lines(GroupEntry(type: .role, userIds: [grace], role: .member), by: ada) == ["Ada dismissed Grace as admin"])
        #expect(lines(GroupEntry(type: .renamed, title: "X"), by: ada) == ["Ada renamed the group to “X”"])
    }

    @Test func iAmYouActingAndYouActedOn() {
        #expect(lines(GroupEntry(type: .added, userIds: [grace, alan, ada]), by: me) == ["You added Grace, Alan and Ada"])
        #expect(lines(GroupEntry(type: .added, userIds: [me]), by: ada) == ["Ada added you"])
        #expect(lines(GroupEntry(type: .removed, userIds: [me]), by: ada) == ["Ada removed you"])
        #expect(lines(GroupEntry(type: .left), by: me) == ["You left"])
        #expect(lines(GroupEntry(type: .left, userIds: [me], role: .owner), by: ada) == ["Ada left", "You are now the owner"])
        #expect(lines(GroupEntry(type: .role, userIds: [me], role: .admin), by: ada) == ["Ada made you an admin"])
        #expect(lines(GroupEntry(type: .renamed, title: "Y"), by: me) == ["You renamed the group to “Y”"])
        #expect(lines(GroupEntry(type: .joined), by: UserID.random()) == ["Someone joined"], "a name not known yet")
    }

    @Test func typingNamesOneTwoOrHowMany() {
        #expect(GroupText.typing([]) == "")
        #expect(GroupText.typing(["Ada"]) == "Ada is typing…")
        #expect(GroupText.typing(["Ada", "Grace"]) == "Ada and Grace are typing…")
        #expect(GroupText.typing(["Ada", "Grace", "Alan"]) == "3 people are typing…")
        #expect(GroupText.typing(Array(repeating: "x", count: 7)) == "7 people are typing…")
        #expect(GroupText.joinNames(["Ada", "Grace", "Alan"]) == "Ada, Grace and Alan")
        #expect(GroupText.roleLabel(.owner) == "Owner" && GroupText.roleLabel(.admin) == "Admin" && GroupText.roleLabel(.member) == nil)
    }

    func member(_ id: UserID, delivered: Int64, read: Int64) -> ConversationMember {
        ConversationMember(userId: id, username: "u", displayName: "U", deliveredSeq: delivered, readSeq: read)
    }

    /// The rule in ``MessageStatus/ofMine(seq:in:me:)``: a group's status is the aggregate, never one member's cursors.
    @Test func myMessagesInAGroupFollowEveryoneNotOneMember() {
        var group = ConversationSummary(
            id: .newGroup(), kind: .group, createdAt: Timestamp(milliseconds: 0), lastSeq: 5, lastMessage: nil, lastActivityAt: Timestamp(milliseconds: 0),
            unreadCount: 0, members: [member(me, delivered: 5, read: 5), member(ada, delivered: 5, read: 5), member(grace, delivered: 1, read: 0)])
        #expect(MessageStatus.ofMine(seq: 4, in: group, me: me) == .sent, "Ada read it, but Grace has not received it: no aggregate yet")
        group.everyoneDeliveredSeq = 4
        group.everyoneReadSeq = 2
        #expect(MessageStatus.ofMine(seq: 4, in: group, me: me) == .delivered)
        #expect(MessageStatus.ofMine(seq: 2, in: group, me: me) == .read)
        #expect(MessageStatus.ofMine(seq: 5, in: group, me: me) == .sent)

        let direct = ConversationSummary(
            id: .direct(me, ada), kind: .direct, createdAt: Timestamp(milliseconds: 0), lastSeq: 5, lastMessage: nil,
            lastActivityAt: Timestamp(milliseconds: 0), unreadCount: 0, members: [member(me, delivered: 5, read: 5), member(ada, delivered: 4, read: 3)],
            everyoneDeliveredSeq: 5, everyoneReadSeq: 5)
        #expect(MessageStatus.ofMine(seq: 3, in: direct, me: me) == .read)
        #expect(MessageStatus.ofMine(seq: 4, in: direct, me: me) == .delivered)
        #expect(MessageStatus.ofMine(seq: 5, in: direct, me: me) == .sent, "a direct conversation reads the other member, not the aggregate")
        #expect(MessageStatus.ofMine(seq: 1, in: nil, me: me) == .sent)
    }
}
