import Foundation
import ParleyCore
import ParleySDK
import ParleyViewModels
import Testing

/// `profile` frames in the SDK and the view models (``ParleyClient`` +Profiles rule 1): every copy
/// of the person takes the new photo, and the list, the chat header and the member list show it.
@MainActor
@Suite struct ProfileTests {
    static let path = "/v1/photos/00000000-0000-4000-8000-000000000001"
    static let url = URL(string: "http://127.0.0.1:1" + path)!

    /// Everything `client` emitted as ``ClientEvent/profile(_:)``.
    @MainActor final class HeardProfiles {
        var users: [User] = []
    }

    static func listen(to client: ParleyClient) -> (HeardProfiles, Task<Void, Never>) {
        let heard = HeardProfiles(), events = client.events()
        let task = Task { @MainActor in
            for await event in events { if case .profile(let user) = event { heard.users.append(user) } }
        }
        return (heard, task)
    }

    @Test func aPartnersNewPhotoReachesTheListTheHeaderTheMembersAndTheCache() async throws {
        let fixture = GroupFixture()
        var photographed = fixture.grace
        photographed.photo = Self.path
        fixture.api.pendingInvitations = [fixture.invitation(from: fixture.grace)]
        let (client, connection) = try await fixture.connectedClient()
        fixture.api.conversationList.append(fixture.base.summary())
        await client.reloadConversations()
        _ = try await eventually("the invitation") { client.invitations.first }
        let (heard, listening) = Self.listen(to: client)
        defer { listening.cancel() }
        let list = ConversationListViewModel(client: client)
        let direct = ChatViewModel(client: client, conversation: fixture.base.conversation, otherUser: nil)
        let group = ChatViewModel(client: client, conversation: fixture.group, otherUser: nil)
        #expect(list.rows.allSatisfy { $0.photoURL == nil } && direct.photoURL == nil)

        connection.push(.profile(photographed))
        _ = try await eventually("the event") { heard.users.first }
        #expect(heard.users == [photographed])
        #expect(list.rows.first { $0.id == fixture.base.conversation }?.photoURL == Self.url)
        #expect(list.rows.first { $0.id == fixture.group }?.photoURL == nil, "a group's row shows the group")
        #expect(direct.photoURL == Self.url && group.photoURL == nil)
        #expect(group.members.first { $0.id == fixture.grace.id }?.photoURL == Self.url)
        #expect(group.members.first { $0.id == fixture.alan.id }?.photoURL == nil)
        #expect(client.invitations.first?.inviter.photo == Self.path && client.users[fixture.grace.id]?.photo == Self.path)
        #expect(client.photoPath(of: fixture.grace.id) == Self.path && client.me.photo == nil)
        // Saved: the next start shows it before the network answers.
        let restarted = try fixture.base.makeClient()
        #expect(restarted.conversations[fixture.group]?.members.first { $0.userId == fixture.grace.id }?.photo == Self.path)
        #expect(restarted.invitations.first?.inviter.photo == Self.path)

        connection.push(.profile(fixture.grace))  // removed
        _ = try await eventually("the removal") { heard.users.count == 2 ? true : nil }
        #expect(list.rows.allSatisfy { $0.photoURL == nil } && direct.photoURL == nil)
        #expect(group.members.allSatisfy { $0.photoURL == nil })
        #expect(client.photoPath(of: fixture.grace.id) == nil && client.invitations.first?.inviter.photo == nil)
    }

    @Test func aPartnersNewNameReachesTheListTheHeaderAndTheMembers() async throws {
        let fixture = GroupFixture()
        var renamed = fixture.grace
        renamed.displayName = "Grace B. Hopper"
        let (client, connection) = try await fixture.connectedClient()
        fixture.api.conversationList.append(fixture.base.summary())
        await client.reloadConversations()
        let list = ConversationListViewModel(client: client)
        let direct = ChatViewModel(client: client, conversation: fixture.base.conversation, otherUser: nil)
        let group = ChatViewModel(client: client, conversation: fixture.group, otherUser: nil)
        _ = try await eventually("the direct chat's row") { list.rows.first { $0.id == fixture.base.conversation } }
        #expect(direct.title == fixture.grace.displayName)

        connection.push(.profile(renamed))
        _ = try await eventually("the new name in the list") {
            list.rows.first { $0.id == fixture.base.conversation && $0.title == "Grace B. Hopper" }
        }
        #expect(direct.title == "Grace B. Hopper")
        #expect(group.members.first { $0.id == fixture.grace.id }?.name == "Grace B. Hopper")
        #expect(client.users[fixture.grace.id]?.displayName == "Grace B. Hopper")
        // Saved: the next start shows it before the network answers.
        let restarted = try fixture.base.makeClient()
        #expect(restarted.conversations[fixture.group]?.members.first { $0.userId == fixture.grace.id }?.displayName == "Grace B. Hopper")
    }

    @Test func myNewNameIsMineEverywhereAtOnce() async throws {
        let fixture = GroupFixture()
        fixture.api.account = fixture.me
        let (client, _) = try await fixture.connectedClient()
        let (heard, listening) = Self.listen(to: client)
        defer { listening.cancel() }
        let me = try await client.setDisplayName("Ada K.")
        #expect(me.displayName == "Ada K." && client.me.displayName == "Ada K." && client.session.user.displayName == "Ada K.")
        #expect(client.conversations[fixture.group]?.members.first { $0.userId == fixture.me.id }?.displayName == "Ada K.")
        _ = try await eventually("the event") { heard.users.first }
        #expect(heard.users.map(\.displayName) == ["Ada K."])
    }

    @Test func myPhotoSetOnAnotherDeviceBecomesMine() async throws {
        let fixture = GroupFixture()
        let (client, connection) = try await fixture.connectedClient()
        let group = ChatViewModel(client: client, conversation: fixture.group, otherUser: nil)
        var me = fixture.me
        me.photo = Self.path
        connection.push(.profile(me))
        _ = try await eventually("my photo") { client.me.photo }
        #expect(client.me == me && client.session.user == me)
        #expect(group.members.first { $0.isMe }?.photoURL == Self.url)
        #expect(client.photoURL(of: fixture.me.id) == Self.url)
    }

    @Test func aNewChatShowsThePhotoItWasFoundWithUntilTheyChangeIt() async throws {
        let fixture = Fixture()
        var found = fixture.grace
        found.photo = Self.path
        let client = try fixture.makeClient()
        let connection = try await fixture.connect(client)
        let chat = ConversationListViewModel(client: client).startChat(with: found)
        #expect(chat.photoURL == Self.url, "no conversation yet: the photo of the search result")
        connection.push(.profile(fixture.grace))
        _ = try await eventually("removed") { chat.photoURL == nil ? true : nil }
        #expect(client.users[fixture.grace.id] == fixture.grace)
    }
}
