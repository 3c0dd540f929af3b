import Foundation
import HTTPTypes
import ParleyCore
import Testing

/// Groups across nodes: a membership change made on one node takes effect on every node's sockets.
@Suite(.serialized) struct GroupClusterTests {
    @Test func aMemberRemovedOnOneNodeStopsHearingTheGroupOnAnother() async throws {
        try await TestCluster.run { cluster in
            try await cluster.withAPI(0) { nodeA in
                try await cluster.withAPI(1) { nodeB in try await Self.scenario(nodeA, nodeB) }
            }
        }
    }

    static func scenario(_ nodeA: TestAPI, _ nodeB: TestAPI) async throws {
        let (ada, grace, alan) = try await nodeA.threeFriends()
        let g = try await nodeB.socket(grace), l = try await nodeB.socket(alan)
        _ = try await g.synced()
        _ = try await l.synced()
        let created = try await nodeA.createGroup(by: ada, title: "Across", members: [grace, alan])
        guard let chat = created.conversation?.id else { throw TestFailure("no group in \(created)") }
        // Created on node A, heard on node B.
        _ = try await g.message(seq: 1)
        _ = try await l.message(seq: 1)
        let first = try await nodeA.send("everyone?", from: ada, in: chat)
        _ = try await l.message(seq: first.seq)
        // Typing from node B reaches node B's other member through the group.
        g.send(.typing(conversationId: chat, isTyping: true))
        try await l.typing(grace.id, isTyping: true)
        // Removed on node A: his socket on node B gets the removal and nothing after it.
        let removed = try await nodeA.action(
            .post, "/v1/conversations/\(chat)/members/\(alan.id)/remove", by: ada, API.GroupActionRequest(clientId: .random()))
        #expect(removed.status == .created)
        let removal = try await l.message(seq: first.seq + 1)
        #expect(removal.entry?.type == .removed)
        let after = try await nodeA.send("not for alan", from: ada, in: chat)
        _ = try await g.message(seq: after.seq)
        l.send(.typing(conversationId: chat, isTyping: true))
        #expect(try await l.firstError().code == .conversationNotFound, "node B knows at once that he is out")
        #expect(await !l.inbox.messages.contains { $0.seq == after.seq && $0.conversationId == chat })
        await g.close()
        await l.close()
    }
}
