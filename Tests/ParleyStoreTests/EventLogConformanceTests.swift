import ParleyCore
import ParleyStore
import Testing

@Suite struct EventLogConformanceTests {
    @Test(arguments: StoreBackend.all)
    func eachUsersStreamIsGaplessAndOrdered(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob"), carol = try await store.makeUser("carol")
        let ab = try await store.send("1", from: alice.id, to: .user(bob.id)).message.conversationId
        _ = try await store.send("2", from: carol.id, to: .user(bob.id))
        _ = try await store.send("3", from: bob.id, to: .conversation(ab))
        _ = try await store.updateReceipt(in: ab, member: alice.id, deliveredSeq: 2, readSeq: 2, now: .now())

        let bobs = try await store.allEvents(of: bob.id)
        #expect(bobs.map(\.position) == Array(1...Int64(bobs.count)))
        // conversation(ab), message 1, conversation(cb), message 2, message 3, receipt
        #expect(bobs.count == 6)
        guard case .conversation(let info) = bobs[0].payload, case .message(let first) = bobs[1].payload,
            case .receipt(let receipt) = bobs[5].payload
        else { Issue.record("unexpected payloads \(bobs)"); return }
        #expect(Set(info.members.map(\.id)) == [alice.id, bob.id])
        #expect(first.text == "1")
        #expect(receipt.userId == alice.id && receipt.readSeq == 2)
        #expect(try await store.streamHead(of: bob.id) == 6)
        #expect(try await store.allEvents(of: carol.id).count == 2)
        #expect(try await store.allEvents(of: bob.id, after: 4).map(\.position) == [5, 6])
    }

    @Test(arguments: StoreBackend.all)
    func replayIsPagedByLimit(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        for i in 0..<10 { _ = try await store.send("\(i)", from: alice.id, to: .user(bob.id)) }
        guard case .events(let page, let head) = try await store.events(of: bob.id, after: 2, limit: 4) else {
            Issue.record("expected events")
            return
        }
        #expect(page.map(\.position) == [3, 4, 5, 6] && head == 11)
    }

    @Test(arguments: StoreBackend.all)
    func prunedOrFuturePositionsAskForResync(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        for i in 0..<10 { _ = try await store.send("\(i)", from: alice.id, to: .user(bob.id)) }
        let removed = try await store.pruneEvents(keepPerUser: 3)
        #expect(removed == (11 - 3) * 2)
        #expect(try await store.events(of: bob.id, after: 0, limit: 100) == .tooOld(head: 11))
        #expect(try await store.events(of: bob.id, after: 7, limit: 100) == .tooOld(head: 11))
        #expect(try await store.allEvents(of: bob.id, after: 8).map(\.position) == [9, 10, 11])
        #expect(try await store.events(of: bob.id, after: 12, limit: 100) == .tooOld(head: 11))
        // Positions keep counting after a prune.
        _ = try await store.send("more", from: alice.id, to: .user(bob.id))
        #expect(try await store.streamHead(of: bob.id) == 12)
    }
}
