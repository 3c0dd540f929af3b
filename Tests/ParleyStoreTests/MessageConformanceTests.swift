import ParleyCore
import ParleyStore
import Testing

@Suite struct MessageConformanceTests {
    @Test(arguments: StoreBackend.all)
    func seqIsGaplessUnderConcurrentSends(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        let id = try await store.send("first", from: alice.id, to: .user(bob.id)).message.conversationId
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<60 {
                let sender = i.isMultiple(of: 2) ? alice.id : bob.id
                group.addTask { _ = try await store.send("m\(i)", from: sender, to: .conversation(id)) }
            }
            try await group.waitForAll()
        }
        let page = try await store.messages(in: id, as: alice.id, query: HistoryQuery(limit: 200))
        #expect(page.messages.map(\.seq) == Array(1...61))
        #expect(Set(page.messages.map(\.id)).count == 61)
    }

    @Test(arguments: StoreBackend.all)
    func retryWithTheSameClientIdReturnsTheOriginal(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        let clientId = ClientMessageID.random()
        let original = try await store.send("once", from: alice.id, to: .user(bob.id), clientId: clientId)
        let retry = try await store.send("once", from: alice.id, to: .conversation(original.message.conversationId), clientId: clientId)
        let retryByUser = try await store.send("edited?", from: alice.id, to: .user(bob.id), clientId: clientId)
        #expect(!original.duplicate && retry.duplicate && retryByUser.duplicate)
        #expect(retry.message == original.message && retryByUser.message == original.message)
        #expect(retry.deliveries.isEmpty)
        #expect(try await store.messages(in: original.message.conversationId, as: bob.id, query: HistoryQuery(limit: 50)).messages.count == 1)
        // Another sender may use the same client id: uniqueness is per sender.
        let bobs = try await store.send("mine", from: bob.id, to: .user(alice.id), clientId: clientId)
        #expect(!bobs.duplicate && bobs.message.seq == 2)
        // The same client id aimed at another conversation is a conflict, not a silent duplicate.
        let carol = try await store.makeUser("carol")
        await #expect(throws: StoreError.clientIdConflict) { try await store.send("x", from: alice.id, to: .user(carol.id), clientId: clientId) }
    }

    /// A batch is stored as its messages would be one after another: in order, each succeeding or
    /// failing on its own, a repeat inside the batch a duplicate of the first.
    @Test(arguments: StoreBackend.all)
    func aBatchIsStoredInOrderAndEachMessageStandsAlone(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob"), carol = try await store.makeUser("carol")
        let theirs = try await store.send("private", from: bob.id, to: .user(carol.id)).message.conversationId
        let repeated = ClientMessageID.random()
        let batch = [
            NewMessage(sender: alice.id, clientId: repeated, target: .user(bob.id), text: "one"),
            NewMessage(sender: alice.id, clientId: .random(), target: .conversation(theirs), text: "not a member"),
            NewMessage(sender: alice.id, clientId: .random(), target: .user(alice.id), text: "to myself"),
            NewMessage(sender: alice.id, clientId: repeated, target: .user(bob.id), text: "one, again"),
            NewMessage(sender: alice.id, clientId: .random(), target: .user(bob.id), text: "two"),
        ]
        let results = await store.send(batch, now: .now())
        #expect(results.count == batch.count)
        let first = try results[0].get(), again = try results[3].get(), second = try results[4].get()
        #expect(first.message.text == "one" && first.message.seq == 1 && !first.duplicate)
        #expect(try #require(throws: StoreError.self) { try results[1].get() } == .conversationNotFound)
        #expect(try #require(throws: StoreError.self) { try results[2].get() } == .invalidRecipient)
        #expect(again.duplicate && again.message == first.message && again.deliveries.isEmpty)
        #expect(second.message.text == "two" && second.message.seq == 2 && !second.duplicate)
        // What was stored is exactly what succeeded, and bob's stream has it in order.
        let stored = try await store.messages(in: first.message.conversationId, as: bob.id, query: HistoryQuery(limit: 10)).messages
        #expect(stored.map(\.text) == ["one", "two"])
        let bobsMessages = try await store.allEvents(of: bob.id).compactMap { event -> String? in
            if case .message(let message) = event.payload, message.conversationId == first.message.conversationId { message.text } else { nil }
        }
        #expect(bobsMessages == ["one", "two"])
        #expect(try await store.streamHead(of: alice.id) == 3, "the conversation, one, two: the refused ones wrote nothing")
        #expect(try await store.streamHead(of: carol.id) == 2, "bob and carol's conversation is untouched")
        #expect(await store.send([], now: .now()).isEmpty)
    }

    @Test(arguments: StoreBackend.all)
    func sendToUnknownUserOrSelfIsRefusedAndCreatesNothing(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice")
        await #expect(throws: StoreError.userNotFound) { try await store.send("x", from: alice.id, to: .user(.random())) }
        await #expect(throws: StoreError.invalidRecipient) { try await store.send("x", from: alice.id, to: .user(alice.id)) }
        #expect(try await store.conversations(of: alice.id, limit: 10, before: nil).isEmpty)
        #expect(try await store.streamHead(of: alice.id) == 0)
    }

    @Test(arguments: StoreBackend.all)
    func historyPagesBackwardAndForward(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        var id: ConversationID?
        for i in 1...120 { id = try await store.send("m\(i)", from: alice.id, to: .user(bob.id)).message.conversationId }
        let conversation = try #require(id)
        let latest = try await store.messages(in: conversation, as: bob.id, query: HistoryQuery(limit: 50))
        #expect(latest.messages.map(\.seq) == Array(71...120) && latest.hasMore)
        let older = try await store.messages(in: conversation, as: bob.id, query: HistoryQuery(limit: 50, before: 71))
        #expect(older.messages.map(\.seq) == Array(21...70) && older.hasMore)
        let oldest = try await store.messages(in: conversation, as: bob.id, query: HistoryQuery(limit: 50, before: 21))
        #expect(oldest.messages.map(\.seq) == Array(1...20) && !oldest.hasMore)
        let newer = try await store.messages(in: conversation, as: bob.id, query: HistoryQuery(limit: 50, after: 100))
        #expect(newer.messages.map(\.seq) == Array(101...120) && !newer.hasMore)
        let window = try await store.messages(in: conversation, as: bob.id, query: HistoryQuery(limit: 5, before: 50, after: 10))
        #expect(window.messages.map(\.seq) == Array(11...15) && window.hasMore)
    }

    @Test(arguments: StoreBackend.all)
    func receiptCursorsOnlyMoveForwardAndReadImpliesDelivered(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        var id: ConversationID?
        for i in 1...5 { id = try await store.send("m\(i)", from: alice.id, to: .user(bob.id)).message.conversationId }
        let conversation = try #require(id)
        #expect(try await store.conversation(conversation, as: bob.id).unreadCount == 5)
        #expect(try await store.conversation(conversation, as: alice.id).unreadCount == 0, "my own messages are read")

        let delivered = try await store.updateReceipt(in: conversation, member: bob.id, deliveredSeq: 4, readSeq: nil, now: .now())
        #expect(delivered.receipt == ReceiptUpdate(conversationId: conversation, userId: bob.id, deliveredSeq: 4, readSeq: 0))
        #expect(Set(delivered.deliveries.map(\.recipient)) == [alice.id, bob.id])
        let read = try await store.updateReceipt(in: conversation, member: bob.id, deliveredSeq: nil, readSeq: 5, now: .now())
        #expect(read.receipt.deliveredSeq == 5 && read.receipt.readSeq == 5)
        let backwards = try await store.updateReceipt(in: conversation, member: bob.id, deliveredSeq: 1, readSeq: 2, now: .now())
        #expect(backwards.receipt.deliveredSeq == 5 && backwards.receipt.readSeq == 5 && backwards.deliveries.isEmpty)
        await #expect(throws: StoreError.cursorBeyondEnd) {
            try await store.updateReceipt(in: conversation, member: bob.id, deliveredSeq: 6, readSeq: nil, now: .now())
        }
        #expect(try await store.conversation(conversation, as: bob.id).unreadCount == 0)
    }
}

extension MessageConformanceTests {
    /// A message's text comes back byte for byte however it is read: the send's outcome, the
    /// duplicate a retry returns, history and the event stream.
    @Test(arguments: StoreBackend.all)
    func textRoundTripsByteForByteThroughEveryRead(backend: StoreBackend) async throws {
        let store = try await backend.make()
        let alice = try await store.makeUser("alice"), bob = try await store.makeUser("bob")
        let texts = ["👩‍👩‍👧‍👦 e\u{301} 中文 العربية\n\ttab", String(repeating: "ß", count: Validation.maxMessageCharacters)]
        for text in texts {
            let clientId = ClientMessageID.random()
            let sent = try await store.send(text, from: alice.id, to: .user(bob.id), clientId: clientId)
            let retry = try await store.send(text, from: alice.id, to: .user(bob.id), clientId: clientId)
            let history = try await store.messages(in: sent.message.conversationId, as: bob.id, query: HistoryQuery(limit: 1))
            let streamed = try await store.allEvents(of: bob.id).compactMap { event -> Message? in
                if case .message(let message) = event.payload { message } else { nil }
            }.last
            #expect(sent.message.text == text && retry.duplicate && retry.message == sent.message)
            #expect(history.messages == [sent.message] && streamed == sent.message)
        }
    }
}
