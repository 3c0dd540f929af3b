import ParleyCore
import ParleyStore
import Testing
import ParleyServer

/// A client may send many frames without waiting for answers (``InboundFrameQueue``): the sends are
/// committed in batches, yet everything is answered, stored and delivered in the order sent.
@Suite struct PipelinedSendTests {
    @Test func aBurstToANewContactIsOneConversationAnsweredInOrder() async throws {
        // One new conversation allowed: every send of the burst names the recipient, and only the
        // first may spend the token (the others go to the conversation it creates).
        try await TestServer.run(configure: { $0.conversationsPerHour = 1 }) { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let b = try await api.socket(bob, after: 0)
            _ = try await b.synced()
            let a = try await api.socket(alice)
            let burst = (1...80).map { "burst \($0)" }
            for text in burst { a.send(.send(SendRequest(clientId: .random(), recipientId: bob.id, text: text))) }
            a.send(.send(SendRequest(ref: "empty", clientId: .random(), recipientId: bob.id, text: "  ")))
            a.send(.send(SendRequest(clientId: .random(), recipientId: bob.id, text: "after the refusal")))
            a.send(.ping(ref: "done"))
            let frames = try await a.inbox.waitFor("the pong") { $0.contains(.pong(ref: "done")) ? $0 : nil }
            let answers = frames.compactMap { frame -> String? in
                switch frame {
                case .sent(_, let message, _, _): message.text
                case .error(let ref, _, let code, _): "\(ref ?? "?"): \(code.rawValue)"
                case .pong(let ref): "pong \(ref ?? "")"
                default: nil
                }
            }
            #expect(answers == burst + ["empty: \(ErrorCode.textEmpty.rawValue)", "after the refusal", "pong done"])
            let acked = frames.compactMap { if case .sent(_, let message, _, _) = $0 { message } else { nil } }
            #expect(acked.map(\.seq) == Array(1...81), "committed in the order sent, gapless")
            #expect(Set(acked.map(\.conversationId)).count == 1)
            #expect(try await api.conversations(of: alice).count == 1)
            _ = try await b.message(seq: 81)
            #expect(await b.inbox.messages.map(\.text) == burst + ["after the refusal"], "delivered in order")
        }
    }

    /// A client that sends and closes at once still gets its sends stored: frames read before the
    /// close are answered before the session ends.
    @Test func sendsReadBeforeACloseAreStored() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let conversation = try await api.send("hello", from: alice, to: bob).conversationId
            let a = try await api.socket(alice)
            _ = try await a.synced()
            for index in 1...40 { a.send(.send(SendRequest(clientId: .random(), conversationId: conversation, text: "m\(index)"))) }
            await a.close()  // without waiting for a single answer
            var stored: [Message] = []
            let deadline = ContinuousClock.now + .seconds(15)
            while stored.count < 41, ContinuousClock.now < deadline {
                stored = try await api.store.messages(in: conversation, as: bob.id, query: HistoryQuery(limit: 100)).messages
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(stored.map(\.text) == ["hello"] + (1...40).map { "m\($0)" })
        }
    }
}
