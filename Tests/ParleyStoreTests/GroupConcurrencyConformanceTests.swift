import ParleyCore
import ParleyStore
import Testing

/// A group written from two nodes at once (two stores on one database): sends, retries and
/// receipts racing each other keep the group's rules.
@Suite struct GroupConcurrencyConformanceTests {
    @Test(arguments: StoreBackend.all)
    func sendsRetriesAndReceiptsFromTwoNodesAtOnceKeepTheGroupsRules(backend: StoreBackend) async throws {
        let database = try await backend.newDatabase()
        let nodes = [try await backend.open(database), try await backend.open(database)]
        let members = [try await nodes[0].makeUser("ada").id, try await nodes[0].makeUser("bob").id, try await nodes[0].makeUser("cy").id]
        let created = try await nodes[0].createGroup(
            NewGroup(creator: members[0], clientId: .random(), title: "Race", memberIds: [members[1], members[2]], maxMembers: 256), now: .now())
        let group = created.conversationId
        for invited in created.invited {
            _ = try await nodes[1].changeGroup(
                MembershipChange(actor: invited, clientId: .random(), conversation: group, action: .accept, maxMembers: 256), now: .now())
        }
        // One client id sent four times at once, over both nodes: stored once, every answer the same message.
        for round in 0..<5 {
            let clientId = ClientMessageID.random()
            let outcomes = try await withThrowingTaskGroup(of: SendOutcome.self) { tasks in
                for node in [nodes[0], nodes[1], nodes[0], nodes[1]] {
                    tasks.addTask { try await node.send("retry \(round)", from: members[1], to: .conversation(group), clientId: clientId) }
                }
                return try await tasks.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { !$0.duplicate }.count == 1)
            #expect(Set(outcomes.map(\.message.id)).count == 1)
        }
        // Every member writing and reading at once, from both nodes.
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for (index, member) in members.enumerated() {
                let node = nodes[index % 2], other = nodes[(index + 1) % 2]
                tasks.addTask {
                    for count in 0..<8 { _ = try await node.send("m\(index)-\(count)", from: member, to: .conversation(group)) }
                }
                tasks.addTask {
                    for _ in 0..<8 {
                        let last = try await other.messages(in: group, as: member, query: HistoryQuery(limit: 1)).messages.last?.seq ?? 0
                        _ = try await other.updateReceipt(in: group, member: member, deliveredSeq: last, readSeq: last, now: .now())
                    }
                }
            }
            try await tasks.waitForAll()
        }
        let history = try await nodes[1].messages(in: group, as: members[0], query: HistoryQuery(limit: 200)).messages
        #expect(history.map(\.seq) == Array(1...Int64(history.count)), "gapless seqs")
        #expect(history.filter { $0.entry == nil }.count == 5 + 3 * 8)
        for member in members {
            // Each stream ascending (gapless but for the positions a group message skips), and the
            // group's messages in it in seq order, each once.
            let events = try await nodes[0].allEvents(of: member)
            let positions = events.map(\.position)
            #expect(zip(positions, positions.dropFirst()).allSatisfy { $0 < $1 } && positions.first == 1)
            #expect(try await nodes[1].streamHead(of: member) == positions.last)
            let seqs = events.compactMap { event -> Int64? in
                if case .message(let message) = event.payload, message.conversationId == group { message.seq } else { nil }
            }
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
            // Every message and entry the member can see, from their join on, reached their stream.
            let visible = try await nodes[1].messages(in: group, as: member, query: HistoryQuery(limit: 200)).messages
            #expect(Set(seqs) == Set(visible.map(\.seq)))
        }
    }
}
