import Foundation
import ParleyCore
import ParleySDK
import ParleyViewModels
import Synchronization
import Testing

/// Three real SDK clients in a group against a real server (or two nodes) on loopback.
@MainActor
@Suite(.serialized) struct GroupEndToEndTests {
    func texts(_ chat: ChatViewModel) -> [String] {
        chat.items.compactMap {
            switch $0 {
            case .separator: nil
            case .entry(_, let lines, _): lines.joined(separator: " / ")
            case .message(let item, let mine, _, let sender): "\(mine ? "me" : sender ?? "?"): \(item.text)"
            }
        }
    }

    func status(_ client: ParleyClient, _ group: ConversationID, _ text: String) -> MessageStatus? {
        client.timeline(group).first { $0.text == text }?.status ?? nil
    }

    @Test(arguments: Topology.allCases) func contactsJoinAStrangerAcceptsAndARemovedMemberGetsNothingMore(topology: Topology) async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob(topology)
        let carolSession = try await server.register("carol", "Carol")
        let (aliceId, bobId, carolId) = (aliceSession.user.id, bobSession.user.id, carolSession.user.id)
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        let carol = try server.client(carolSession, directory: temporaryDirectory())
        for client in [alice, bob, carol] { client.start() }
        _ = try await eventually("all online") { [alice, bob, carol].allSatisfy { $0.connectionState == .online } ? true : nil }

        // Alice and Bob are contacts (both wrote in their direct conversation); Carol is a stranger.
        let direct = ConversationID.direct(aliceId, bobId)
        try alice.send("hi Bob", in: direct, to: bobId)
        _ = try await eventually("bob has it") { bob.timeline(direct).count == 1 ? true : nil }
        try bob.send("hi Alice", in: direct)
        _ = try await eventually("alice has the reply") { alice.timeline(direct).count == 2 ? true : nil }

        let created = try await alice.createGroup(title: "Trip", members: [bobId, carolId])
        let group = created.conversation.id
        #expect(created.invited == [carolId] && group.isGroup)
        _ = try await eventually("bob is in") { bob.conversations[group]?.title == "Trip" ? true : nil }
        _ = try await eventually("carol is invited") { carol.invitations.first?.conversationId == group ? true : nil }
        #expect(carol.conversations[group] == nil && carol.invitations.first?.inviter.id == aliceId)
        try await carol.accept(group)
        _ = try await eventually("alice sees three members") { alice.conversations[group]?.members.count == 3 ? true : nil }
        #expect(alice.myRole(in: group) == .owner && carol.myRole(in: group) == .member)

        let aliceChat = ChatViewModel(client: alice, conversation: group, otherUser: nil)
        let bobChat = ChatViewModel(client: bob, conversation: group, otherUser: nil)
        let carolChat = ChatViewModel(client: carol, conversation: group, otherUser: nil)
        aliceChat.messageText = "Hello all"
        aliceChat.send()
        _ = try await eventually("bob sees Alice's name") { texts(bobChat).contains("Alice: Hello all") ? true : nil }
        _ = try await eventually("carol too") { texts(carolChat).contains("Alice: Hello all") ? true : nil }
        // Carol's name reaches Bob with the group's member list, read again after the entry (a stranger's
        // name is not in the entry itself): until then the entry says "Someone joined".
        _ = try await eventually("bob knows who joined") {
            Array(texts(bobChat).prefix(2)) == ["Alice created the group “Trip” / Alice added you", "Carol joined"] ? true : nil
        }
        #expect(texts(carolChat).first == "You joined", "Carol's history starts where she joined")
        _ = try await eventually("delivered to everyone") { status(alice, group, "Hello all") == .delivered ? true : nil }
        let seq = try #require(alice.timeline(group).first { $0.text == "Hello all" }?.seq)
        bobChat.markVisible(upTo: seq)
        carolChat.markVisible(upTo: seq)
        _ = try await eventually("read by everyone") { status(alice, group, "Hello all") == .read ? true : nil }
        let info = try await alice.messageInfo(conversation: group, seq: seq)
        #expect(Set(info.readBy) == [bobId, carolId] && info.pending.isEmpty)

        carolChat.messageText = "@bob see you there"
        carolChat.send()
        _ = try await eventually("bob is mentioned") { bob.mentionCount(group) == 1 ? true : nil }
        #expect(bob.unreadCount(group) == 1, "the entries never counted")

        // Carol is removed mid-conversation: she keeps her history, and gets nothing newer.
        try await alice.removeMember(carolId, from: group)
        _ = try await eventually("carol is out") { carol.conversations[group]?.leftSeq != nil ? true : nil }
        carolChat.messageText = "still here?"
        #expect(!carolChat.canSend && carolChat.cannotSendReason == ParleyClient.notAMember)
        #expect(texts(carolChat).last == "Alice removed you")
        try alice.send("after Carol left", in: group)
        _ = try await eventually("bob gets it") { bob.timeline(group).contains { $0.text == "after Carol left" } ? true : nil }
        // A later event in Carol's own stream: had the group message reached her, it would be before this.
        try alice.send("a word for Carol", in: .direct(aliceId, carolId), to: carolId)
        _ = try await eventually("carol's later event") { carol.timeline(.direct(aliceId, carolId)).count == 1 ? true : nil }
        #expect(!carol.timeline(group).contains { $0.text == "after Carol left" })
        await carol.reloadConversations()
        #expect(carol.conversations[group]?.leftSeq != nil && carol.conversations[group]?.members.isEmpty == true)

        // Bob on a new device: a departed member's name is fetched by id.
        let bobAgain = try server.client(bobSession, directory: temporaryDirectory())
        bobAgain.start()
        _ = try await eventually("bob's new device") { bobAgain.conversations[group] }
        let fresh = ChatViewModel(client: bobAgain, conversation: group, otherUser: nil)
        await fresh.load()
        #expect(texts(fresh).contains("Carol: @bob see you there") && texts(fresh).contains("Alice removed Carol"))
        #expect(fresh.members.map(\.name) == ["Alice", "You"])
        for client in [alice, bob, carol, bobAgain] { client.stop() }
        await server.stop()
    }

    @Test func aCreateWhoseAnswerWasLostMakesOneGroup() async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob()
        let losing = LosingRequester(AsyncHTTPClientRequester(client: server.http), losing: "/v1/groups")
        let alice = ParleyClient(
            session: aliceSession, api: HTTPParleyAPI(baseURL: server.url, requester: losing), transport: WebSocketTransport(serverURL: server.url),
            store: try ClientStorage(directory: temporaryDirectory()).store(for: aliceSession.user.id))
        let created = try await alice.createGroup(title: "Once", members: [bobSession.user.id])
        #expect(losing.lost == 1, "the first answer was lost after the server committed")
        let api = HTTPParleyAPI(baseURL: server.url, client: server.http)
        let groups = try await api.conversations(token: aliceSession.token).filter { $0.kind == .group }
        #expect(groups.map(\.id) == [created.conversation.id], "the retry (same clientId) answered the original")

        let request = API.CreateGroupRequest(clientId: .random(), title: "Twice", memberIds: [bobSession.user.id])
        let first = try await api.createGroup(request, token: aliceSession.token)
        let second = try await api.createGroup(request, token: aliceSession.token)
        #expect(!first.duplicate && second.duplicate)
        #expect(first.conversation?.id == second.conversation?.id && first.entry?.id == second.entry?.id)
        #expect(try await api.invitations(token: bobSession.token).map(\.title).sorted() == ["Once", "Twice"], "one invitation per group")
        await server.stop()
    }
}

/// Sends every request, but loses the answer of the first whose path ends with `losing`: the
/// server has done it, the client hears nothing.
final class LosingRequester: HTTPRequester {
    let wrapped: any HTTPRequester
    let suffix: String
    private let losses = Mutex(0)
    /// How many answers were lost (only the first).
    var lost: Int { losses.withLock { $0 } }

    init(_ wrapped: any HTTPRequester, losing suffix: String) {
        self.wrapped = wrapped
        self.suffix = suffix
    }

    func send(_ method: String, _ url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        let answer = try await wrapped.send(method, url, headers: headers, body: body)
        let lose =
            url.path.hasSuffix(suffix)
            && losses.withLock { lost in
                guard lost == 0 else { return false }
                lost += 1
                return true
            }
        if lose { throw URLError(.networkConnectionLost) }
        return answer
    }
}
