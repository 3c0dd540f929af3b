import ParleyCore
import ParleyStore
import Testing

/// The races two nodes (two stores on one database) run into, and the rules that must hold anyway.
@Suite struct ConcurrencyConformanceTests {
    @Test(arguments: StoreBackend.all)
    func sameClientIdFromTwoNodesAtOnceStoresOneMessage(backend: StoreBackend) async throws {
        let database = try await backend.newDatabase()
        let nodeA = try await backend.open(database), nodeB = try await backend.open(database)
        let alice = try await nodeA.makeUser("alice"), bob = try await nodeA.makeUser("bob")
        let id = try await nodeA.send("hi", from: alice.id, to: .user(bob.id)).message.conversationId
        for round in 0..<10 {
            let clientId = ClientMessageID.random()
            let outcomes = try await withThrowingTaskGroup(of: SendOutcome.self) { group in
                for store in [nodeA, nodeB, nodeA, nodeB] {
                    group.addTask { try await store.send("retry \(round)", from: alice.id, to: .conversation(id), clientId: clientId) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { !$0.duplicate }.count == 1)
            #expect(Set(outcomes.map(\.message)).count == 1)
        }
        let page = try await nodeB.messages(in: id, as: bob.id, query: HistoryQuery(limit: 100))
        #expect(page.messages.map(\.seq) == Array(1...11))
    }

    @Test(arguments: StoreBackend.all)
    func creatingOneConversationFromTwoNodesAtOnceMakesOne(backend: StoreBackend) async throws {
        let database = try await backend.newDatabase()
        let nodeA = try await backend.open(database), nodeB = try await backend.open(database)
        var users: [User] = []
        for i in 0..<12 { users.append(try await nodeA.makeUser("user\(i)")) }
        for pair in stride(from: 0, to: users.count, by: 2) {
            let (a, b) = (users[pair].id, users[pair + 1].id)
            let outcomes = try await withThrowingTaskGroup(of: ConversationOutcome.self) { group in
                group.addTask { try await nodeA.createDirectConversation(between: a, and: b, now: .now()) }
                group.addTask { try await nodeB.createDirectConversation(between: b, and: a, now: .now()) }
                group.addTask { try await nodeB.createDirectConversation(between: a, and: b, now: .now()) }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter(\.created).count == 1)
            #expect(Set(outcomes.map(\.conversation.id)).count == 1)
            let eventsOfA = try await nodeA.allEvents(of: a), eventsOfB = try await nodeB.allEvents(of: b)
            #expect(eventsOfA.count == 1 && eventsOfB.count == 1)
        }
    }

    /// A reader polling while two nodes write never sees a later position before an earlier one:
    /// what it has read is always 1…n with nothing missing (positions commit in order).
    @Test(arguments: StoreBackend.all)
    func streamPositionsCommitInOrderAcrossNodes(backend: StoreBackend) async throws {
        let database = try await backend.newDatabase()
        let nodeA = try await backend.open(database), nodeB = try await backend.open(database)
        let hub = try await nodeA.makeUser("hub")
        var peers: [User] = []
        for i in 0..<4 { peers.append(try await nodeA.makeUser("peer\(i)")) }
        let others = peers
        let total = 120
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, other) in others.enumerated() {
                let store = i.isMultiple(of: 2) ? nodeA : nodeB
                group.addTask {
                    for n in 0..<(total / others.count) { _ = try await store.send("m\(n)", from: other.id, to: .user(hub.id)) }
                }
            }
            group.addTask {
                var seen: Int64 = 0
                while seen < Int64(total + others.count) {
                    let events = try await nodeB.allEvents(of: hub.id, after: seen)
                    for event in events {
                        #expect(event.position == seen + 1, "a position was skipped: a later one committed first")
                        seen = event.position
                    }
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            try await group.waitForAll()
        }
    }

    @Test(arguments: StoreBackend.all)
    func receiptsFromTwoNodesNeverMoveACursorBack(backend: StoreBackend) async throws {
        let database = try await backend.newDatabase()
        let nodeA = try await backend.open(database), nodeB = try await backend.open(database)
        let alice = try await nodeA.makeUser("alice"), bob = try await nodeA.makeUser("bob")
        var id: ConversationID?
        for i in 1...40 { id = try await nodeA.send("m\(i)", from: alice.id, to: .user(bob.id)).message.conversationId }
        let conversation = try #require(id)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for seq in (1...40).shuffled() {
                let store = seq.isMultiple(of: 2) ? nodeA : nodeB
                group.addTask {
                    _ = try await store.updateReceipt(in: conversation, member: bob.id, deliveredSeq: nil, readSeq: Int64(seq), now: .now())
                }
            }
            try await group.waitForAll()
        }
        let summary = try await nodeB.conversation(conversation, as: bob.id)
        let me = try #require(summary.members.first { $0.userId == bob.id })
        #expect(me.readSeq == 40 && me.deliveredSeq == 40)
        // Every receipt event bob's stream got moved the cursor forward.
        let reads = try await nodeA.allEvents(of: bob.id).compactMap { event -> Int64? in
            if case .receipt(let receipt) = event.payload, receipt.userId == bob.id { return receipt.readSeq }
            return nil
        }
        #expect(reads == reads.sorted() && Set(reads).count == reads.count)
    }
}
