import Foundation
import HTTPTypes
import ParleyCore
import Testing

/// Message actions across nodes: an action made on one node reaches the members' sockets on another
/// live, and a socket that comes back on a third resumes into the message as it is now.
@Suite(.serialized) struct MessageActionClusterTests {
    @Test func anActionOnOneNodeReachesEveryMemberOnAnother() async throws {
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
        let question = try await nodeA.send("lunch at 12?", from: ada, in: chat)
        _ = try await l.message(seq: question.seq)
        // Edited on node A, reacted to on node B: both members on node B hear both.
        let edit = try await nodeA.act(ada, question.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .edit, text: "lunch at 1?"))
        #expect(edit.status == .ok)
        _ = try await l.updated(seq: question.seq) { $0.text == "lunch at 1?" }
        g.send(.action(MessageActionRequest(ref: "r", clientId: .random(), conversationId: chat, seq: question.seq, kind: .react, emoji: "👍")))
        _ = try await g.acted(ref: "r")
        let reacted = try await l.updated(seq: question.seq) { $0.reactions?.first?.emoji == "👍" }
        #expect(reacted.reactions?.first?.mine == false && reacted.reactions?.first?.userIds == [grace.id])
        // Alan goes offline; Ada deletes on node A; Alan resumes on node A and gets the tombstone.
        let position = try #require(await l.inbox.lastPosition)
        await l.close()
        let deleted = try await nodeA.act(ada, question.seq, in: chat, API.MessageActionBody(clientId: .random(), kind: .delete))
        #expect(deleted.status == .ok)
        let back = try await nodeA.socket(alan, after: position)
        let tombstone = try await back.updated(seq: question.seq) { $0.isDeleted }
        #expect(tombstone.text.isEmpty && tombstone.reactions == nil)
        _ = try await g.updated(seq: question.seq) { $0.isDeleted }
        await g.close()
        await back.close()
    }
}
