import Foundation
import ParleyCore
import ParleyStore
import Testing

/// Pipelined sends from many connections at once (PostgreSQL writes them in shared batches:
/// ``PostgresSendQueue``): every send is answered once, each conversation's seqs stay gapless,
/// each sender's messages keep the order written, and every stream stays gapless. Users share
/// conversations in a ring, so batches that lock overlapping users in different orders would
/// deadlock if the locks were not taken in one order; an outsider's refused sends land among them.
@Suite struct SendBatchConformanceTests {
    @Test(arguments: StoreBackend.all)
    func manyConnectionsSendingBatchesAtOnceKeepEveryOrder(backend: StoreBackend) async throws {
        let store = try await backend.make()
        var users: [User] = []
        for index in 0..<8 { users.append(try await store.makeUser("ring\(index)")) }
        // Each user writes to the next one and to the one after that: every user is in four conversations.
        let senders: [(sender: User, recipient: User)] = users.indices.flatMap { index in
            [(users[index], users[(index + 1) % users.count]), (users[index], users[(index + 3) % users.count])]
        }
        let rounds = 6, perBatch = 5
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (sender, recipient) in senders {
                group.addTask {
                    for round in 0..<rounds {
                        let batch = (0..<perBatch).map { index in
                            NewMessage(
                                sender: sender.id, clientId: .random(), target: .user(recipient.id),
                                text: "\(sender.username)>\(recipient.username) \(round * perBatch + index)")
                        }
                        let results = await store.send(batch, now: .now())
                        #expect(results.count == perBatch)
                        for result in results { _ = try result.get() }
                    }
                }
            }
            // A sender refused in the same moments (not a member of the conversation it names): its
            // refusals are its own, and the sends batched with them still go through (above).
            let outsider = users[5], closed = ConversationID.direct(users[0].id, users[1].id)
            group.addTask {
                for _ in 0..<rounds {
                    let refused = NewMessage(sender: outsider.id, clientId: .random(), target: .conversation(closed), text: "let me in")
                    let results = await store.send([refused, refused], now: .now())
                    for result in results { #expect(throws: StoreError.conversationNotFound) { try result.get() } }
                }
            }
            try await group.waitForAll()
        }
        for (sender, recipient) in senders {
            let id = ConversationID.direct(sender.id, recipient.id)
            let page = try await store.messages(in: id, as: sender.id, query: HistoryQuery(limit: 200))
            #expect(page.messages.map(\.seq) == Array(1...Int64(page.messages.count)), "gapless seqs in \(id)")
            let mine = page.messages.filter { $0.senderId == sender.id }.map(\.text)
            #expect(mine == (0..<(rounds * perBatch)).map { "\(sender.username)>\(recipient.username) \($0)" }, "in the order written")
        }
        for user in users {
            let events = try await store.allEvents(of: user.id)
            #expect(events.map(\.position) == Array(1...Int64(events.count)), "gapless stream of \(user.username)")
            let messages = events.filter { if case .message = $0.payload { true } else { false } }
            // Two conversations it writes to, two it is written to: 4 × 30 messages.
            #expect(messages.count == 4 * rounds * perBatch)
        }
    }
}
