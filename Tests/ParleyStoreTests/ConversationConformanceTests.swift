import ParleyCore
import ParleyStore
import Testing

@Suite struct ConversationConformanceTests {
    @Test(arguments: StoreBackend.all)
    func directConversationIsCreatedOnceWithEventsForBoth(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        let first = try await store.createDirectConversation(between: alice.id, and: bob.id, now: .now())
        let second = try await store.createDirectConversation(between: bob.id, and: alice.id, now: .now())
        #expect(first.created && !second.created)
        #expect(first.conversation.id == second.conversation.id)
        #expect(Set(first.deliveries.map(\.recipient)) == [alice.id, bob.id])
        #expect(second.deliveries.isEmpty)
        #expect(first.conversation.lastSeq == 0 && first.conversation.lastMessage == nil)
        #expect(Set(first.conversation.members.map(\.userId)) == [alice.id, bob.id])
        await #expect(throws: StoreError.invalidRecipient) {
            try await store.createDirectConversation(between: alice.id, and: alice.id, now: .now())
        }
    }

    @Test(arguments: StoreBackend.all)
    func concurrentFirstMessagesFromBothSidesEndInOneConversation(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        let outcomes = try await withThrowingTaskGroup(of: SendOutcome.self) { group in
            for i in 0..<20 {
                let (from, to) = i.isMultiple(of: 2) ? (alice.id, bob.id) : (bob.id, alice.id)
                group.addTask { try await store.send("hi \(i)", from: from, to: .user(to)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(outcomes.map(\.message.conversationId)).count == 1)
        #expect(outcomes.map(\.message.seq).sorted() == Array(1...20))
        #expect(try await store.conversations(of: alice.id, limit: 10, before: nil).count == 1)
        let conversationEvents = try await store.allEvents(of: alice.id).filter {
            if case .conversation = $0.payload { true } else { false }
        }
        #expect(conversationEvents.count == 1)
    }

    @Test(arguments: StoreBackend.all)
    func listIsSortedByLastActivityAndPages(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let me = try await store.makeUser("me")
        var others: [User] = []
        for i in 0..<5 { others.append(try await store.makeUser("user\(i)")) }
        for (i, other) in others.enumerated() {
            _ = try await store.send("m\(i)", from: other.id, to: .user(me.id), at: Timestamp(milliseconds: 1000 + Int64(i)))
        }
        // A new message moves the oldest conversation to the top.
        _ = try await store.send("again", from: others[0].id, to: .user(me.id), at: Timestamp(milliseconds: 2000))
        let all = try await store.conversations(of: me.id, limit: 10, before: nil)
        #expect(all.map { $0.otherMember(than: me.id)?.username } == ["user0", "user4", "user3", "user2", "user1"])
        #expect(all[0].lastMessage?.text == "again" && all[0].unreadCount == 2)
        let firstPage = try await store.conversations(of: me.id, limit: 2, before: nil)
        let cursor = ConversationCursor(lastActivityAt: firstPage[1].lastActivityAt, id: firstPage[1].id)
        let secondPage = try await store.conversations(of: me.id, limit: 2, before: cursor)
        #expect((firstPage + secondPage).map(\.id) == Array(all.prefix(4)).map(\.id))
    }

    @Test(arguments: StoreBackend.all)
    func nonMembersCannotSeeAConversation(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob"), eve = try await store.makeUser("eve")
        let sent = try await store.send("secret", from: alice.id, to: .user(bob.id))
        let id = sent.message.conversationId
        await #expect(throws: StoreError.conversationNotFound) { try await store.conversation(id, as: eve.id) }
        await #expect(throws: StoreError.conversationNotFound) {
            try await store.messages(in: id, as: eve.id, query: HistoryQuery(limit: 50))
        }
        await #expect(throws: StoreError.conversationNotFound) { try await store.send("hi", from: eve.id, to: .conversation(id)) }
        await #expect(throws: StoreError.conversationNotFound) {
            try await store.updateReceipt(in: id, member: eve.id, deliveredSeq: 1, readSeq: nil, now: .now())
        }
        #expect(try await store.contacts(of: eve.id).isEmpty)
        #expect(try await store.memberIDs(of: id).sorted() == [alice.id, bob.id].sorted())
    }

    /// Presence is shared only once both members have written: a stranger who writes first learns
    /// nothing (not online, not last seen) until the other replies.
    @Test(arguments: StoreBackend.all)
    func contactsFormWhenBothMembersHaveWritten(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        try await store.recordLastSeen(bob.id, at: Timestamp(milliseconds: 5_000))
        let first = try await store.send("hi, stranger here", from: alice.id, to: .user(bob.id))
        let id = first.message.conversationId
        #expect(!first.contactsFormed)
        #expect(try await store.send("again", from: alice.id, to: .conversation(id)).contactsFormed == false)
        #expect(try await store.contacts(of: alice.id).isEmpty)
        #expect(try await store.contacts(of: bob.id).isEmpty)
        #expect(try await store.liveStart(of: bob.id) == LiveStart(head: 3, contacts: []), "conversation, hi, again; no contacts yet")
        let seenByAlice = try await store.conversation(id, as: alice.id)
        #expect(seenByAlice.presenceShared == false)
        #expect(seenByAlice.otherMember(than: alice.id)?.lastSeenAt == nil, "no last seen for a stranger")

        let reply = try await store.send("hello", from: bob.id, to: .conversation(id))
        #expect(reply.contactsFormed, "the reply forms contacts")
        #expect(try await store.send("more", from: bob.id, to: .conversation(id)).contactsFormed == false, "only once")
        #expect(try await store.contacts(of: alice.id) == [bob.id])
        #expect(try await store.contacts(of: bob.id) == [alice.id])
        // What a connect reads in one go is what the two reads say.
        #expect(try await store.liveStart(of: alice.id) == LiveStart(head: try await store.streamHead(of: alice.id), contacts: [bob.id]))
        #expect(try await store.liveStart(of: bob.id) == LiveStart(head: 5, contacts: [alice.id]), "conversation, hi, again, hello, more")
        let shared = try await store.conversation(id, as: alice.id)
        #expect(shared.presenceShared == true)
        #expect(shared.otherMember(than: alice.id)?.lastSeenAt == Timestamp(milliseconds: 5_000))
        let retried = try await store.send("hello", from: bob.id, to: .conversation(id), clientId: reply.message.clientId)
        #expect(retried.duplicate && !retried.contactsFormed, "a retried send forms nothing again")
    }
}
