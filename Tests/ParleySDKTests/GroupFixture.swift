import Foundation
import ParleyCore
import ParleySDK
import ParleyViewModels

/// Group test data on top of ``Fixture``: Ada (me), Grace and Alan in "Trip".
@MainActor
struct GroupFixture {
    let base = Fixture()
    let alan = User(id: .random(), username: "alan", displayName: "Alan Turing", createdAt: Timestamp(milliseconds: 0))
    let group = ConversationID.newGroup()
    var me: User { base.me }
    var grace: User { base.grace }
    var api: FakeAPI { base.api }

    func member(_ user: User, _ role: MemberRole, read: Int64 = 0) -> ConversationMember {
        ConversationMember(userId: user.id, username: user.username, displayName: user.displayName, deliveredSeq: read, readSeq: read, role: role)
    }

    /// The group as the server would answer it: I am `myRole`; Grace and Alan are members unless `members` says otherwise.
    func summary(
        title: String = "Trip", lastSeq: Int64 = 0, myRead: Int64 = 0, myRole: MemberRole = .owner, members: [ConversationMember]? = nil,
        unread: Int64 = 0, mentions: Int64 = 0, leftSeq: Int64? = nil, delivered: Int64? = nil, read: Int64? = nil, lastMessage: Message? = nil
    ) -> ConversationSummary {
        let others = members ?? [member(grace, .member, read: lastSeq), member(alan, .member, read: lastSeq)]
        return ConversationSummary(
            id: group, kind: .group, createdAt: Timestamp(milliseconds: 0), lastSeq: lastSeq, lastMessage: lastMessage,
            lastActivityAt: Timestamp(milliseconds: 1000 + lastSeq), unreadCount: unread,
            members: leftSeq == nil ? [member(me, myRole, read: myRead)] + others : [],
            title: title, mentionCount: mentions, everyoneDeliveredSeq: delivered, everyoneReadSeq: read, leftSeq: leftSeq)
    }

    func message(_ seq: Int64, from sender: User, _ text: String = "", entry: GroupEntry? = nil, mentions: [UserID]? = nil) -> Message {
        Message(
            id: .random(), conversationId: group, seq: seq, senderId: sender.id, clientId: .random(), text: text,
            createdAt: Timestamp(milliseconds: 1000 + seq), entry: entry, mentions: mentions)
    }

    func event(_ position: Int64, _ message: Message) -> ServerFrame {
        .event(StreamEvent(position: position, payload: .message(message)))
    }

    func invitation(to id: ConversationID = .newGroup(), title: String = "Party", from inviter: User? = nil, at ms: Int64 = 5000) -> Invitation {
        Invitation(conversationId: id, title: title, inviter: inviter ?? grace, memberCount: 3, createdAt: Timestamp(milliseconds: ms))
    }

    /// Someone else, by username and display name.
    func person(_ username: String, _ name: String) -> User {
        User(id: .random(), username: username, displayName: name, createdAt: Timestamp(milliseconds: 0))
    }

    /// A client in the group with `third` a member beside Grace and Alan, and the group's chat.
    func chat(withThird third: User) async throws -> (ParleyClient, FakeConnection, ChatViewModel) {
        let (client, connection) = try await connectedClient(summary(members: [member(grace, .member), member(alan, .member), member(third, .member)]))
        return (client, connection, ChatViewModel(client: client, conversation: group, otherUser: nil))
    }

    /// A client connected to the fakes, with the group in its list.
    func connectedClient(_ summary: ConversationSummary? = nil) async throws -> (ParleyClient, FakeConnection) {
        api.conversationList = [summary ?? self.summary()]
        let client = try base.makeClient()
        let connection = try await base.connect(client)
        _ = try await eventually("the group") { client.conversations[group] }
        return (client, connection)
    }
}
