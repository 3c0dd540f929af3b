import ParleyCore
@testable import ParleyServer
import Synchronization
import Testing
import Foundation

@Suite struct ClientConnectionTests {
    @Test func aFullQueueMarksTheReaderSlowAndEndsTheQueue() async {
        let connection = ClientConnection(userId: .random(), queueLimit: 2)
        connection.send(.pong(ref: "1"))
        connection.send(.pong(ref: "2"))
        #expect(!connection.overflowed)
        connection.send(.pong(ref: "3"))
        #expect(connection.overflowed)
        let (items, ended) = connection.takeQueued()
        let drained = items.map { item -> String? in if case .frame(.pong(let ref)) = item { ref } else { nil } }
        #expect(drained == ["1", "2"], "the queue holds at most its limit and then ends")
        #expect(ended)
    }
}

/// ``ClientConnection`` rule 6: a writer is started only when there is something to do, once.
@Suite struct LazyWriterTests {
    @Test func aWriterStartsOnlyWhenSomethingIsQueuedAndNoneRuns() {
        let connection = ClientConnection(userId: .random(), queueLimit: 10)
        let writer = RecordingWriter(writesLive: false)
        connection.beginWriting(writer)  // the caller runs the first writer itself
        connection.send(.pong(ref: "1"))
        #expect(writer.runs == 0, "a writer is running: no second one")
        #expect(connection.takeQueued().items.count == 1)
        #expect(connection.takeQueued().items.isEmpty, "empty: the writer stops")
        connection.send(.pong(ref: "2"))
        connection.send(.pong(ref: "3"))
        #expect(writer.runs == 1, "the first item after the writer stopped starts one, the second does not")
        #expect(connection.takeQueued().items.count == 2)
        #expect(connection.takeQueued().items.isEmpty)
        connection.finish()
        #expect(writer.runs == 2, "the end of the queue starts a writer, to close the socket")
        let last = connection.takeQueued()
        #expect(last.items.isEmpty && last.ended)
        connection.send(.pong(ref: "after the end"))
        #expect(connection.takeQueued().items.isEmpty, "nothing is queued after the end")
        #expect(writer.runs == 2)
    }

    @Test func noWriterStartsOnceWritingStopped() {
        let connection = ClientConnection(userId: .random(), queueLimit: 10)
        let writer = RecordingWriter(writesLive: false)
        connection.beginWriting(writer)
        _ = connection.takeQueued()
        connection.stopWriting()
        connection.send(.pong(ref: "1"))
        connection.finish()
        #expect(writer.runs == 0)
    }
}

/// ``ClientConnection`` rule 8: a live event finding the connection idle is written without a run,
/// one writer at a time.
@Suite struct LiveWriteTests {
    static func event(_ position: Int64) -> EncodedEvent { EncodedEvent(position: position, text: "e\(position)") }

    @Test func anIdleConnectionWritesALiveEventAtOnceAndOnlyThen() {
        let connection = ClientConnection(userId: .random(), queueLimit: 10)
        let writer = RecordingWriter()
        connection.beginWriting(writer)
        connection.deliver(Self.event(1))
        #expect(writer.written.isEmpty, "the first run (the replay) holds the socket: the event is queued")
        #expect(connection.takeQueued().items.count == 1)
        #expect(connection.takeQueued().items.isEmpty, "the run stops")
        connection.deliver(Self.event(2))
        #expect(writer.written == [2], "idle: written at once")
        #expect(writer.runs == 0, "no run for it")
        #expect(connection.takeQueued().items.isEmpty, "and nothing queued")
        connection.send(.pong(ref: "1"))
        #expect(writer.runs == 1, "a queued frame starts a run")
        connection.deliver(Self.event(3))
        #expect(writer.written == [2], "a run holds the socket: queued behind the frame, in order")
        #expect(connection.takeQueued().items.count == 2)
    }

    @Test func anEventTheLiveWriteCannotTakeIsQueuedAndStartsARun() {
        let connection = ClientConnection(userId: .random(), queueLimit: 10)
        let writer = RecordingWriter(writesLive: false)
        connection.beginWriting(writer)
        _ = connection.takeQueued()
        connection.deliver(Self.event(5))
        #expect(writer.runs == 1, "released with an item queued: a run starts")
        let items = connection.takeQueued().items
        guard case .events(let events)? = items.first else {
            Issue.record("the event is queued")
            return
        }
        #expect(events.map(\.position) == [5])
    }

    @Test func whatIsQueuedDuringALiveWriteStartsARunWhenItLetsGo() {
        let connection = ClientConnection(userId: .random(), queueLimit: 10)
        let writer = RecordingWriter(onLive: { connection.send(.pong(ref: "meanwhile")) })
        connection.beginWriting(writer)
        _ = connection.takeQueued()
        connection.deliver(Self.event(1))
        #expect(writer.log == ["event 1", "run"], "the live write held the socket: the run started once it let go")
        #expect(connection.takeQueued().items.count == 1)
    }

    @Test func anEndingOrStoppedConnectionGrantsNoLiveWrite() {
        let connection = ClientConnection(userId: .random(), queueLimit: 10)
        let writer = RecordingWriter()
        connection.beginWriting(writer)
        _ = connection.takeQueued()
        connection.stopWriting()
        connection.deliver(Self.event(1))
        #expect(writer.written.isEmpty && writer.runs == 0)
        connection.finish()
        connection.deliver(Self.event(2))
        #expect(writer.written.isEmpty)
    }
}

@Suite struct SessionTokenHashTests {
    /// FIPS 180-2 test vectors: the stored hash stays what earlier versions stored (sessions survive an upgrade).
    @Test func hashesAreLowercaseHexSHA256() {
        #expect(SessionTokens.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SessionTokens.hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let token = SessionTokens.generate()
        #expect(SessionTokens.isWellFormed(token))
        #expect(SessionTokens.hash(token).utf8.count == 64 && SessionTokens.hash(token) == SessionTokens.hash(token))
    }
}

@Suite struct RateLimiterTests {
    @Test func burstThenRetryAfterPerKey() {
        let clock = LoginBackoffRulesTests.ManualClock()
        let limiter = RateLimiter(ratePerSecond: 0.5, burst: 2, now: { clock.now })
        #expect(limiter.acquire("a") == nil)
        #expect(limiter.acquire("a") == nil)
        #expect(limiter.acquire("a") == 2, "one token takes 2 s at 0.5/s")
        #expect(limiter.acquire("b") == nil, "keys are independent")
    }

    @Test func tokensRefillOverTime() {
        let clock = LoginBackoffRulesTests.ManualClock()
        let limiter = RateLimiter(ratePerSecond: 50, burst: 1, now: { clock.now })
        #expect(limiter.acquire("a") == nil)
        #expect(limiter.acquire("a") != nil)
        clock.advance(by: .milliseconds(19))
        #expect(limiter.acquire("a") != nil, "a token takes 20 ms at 50/s")
        clock.advance(by: .milliseconds(2))
        #expect(limiter.acquire("a") == nil)
        #expect(limiter.acquire("a") != nil, "the burst is one")
    }
}

@Suite struct TypingTrackerTests {
    let conversation = ConversationID.direct(.random(), .random())
    let alice = UserID.random(), bob = UserID.random()

    @Test func startIsReportedOnceAndRenewalsExtendTheDeadline() {
        var tracker = TypingTracker()
        let key = TypingTracker.Key(conversation: conversation, user: alice)
        let now = ContinuousClock.now
        let started = tracker.start(key, audience: [bob], until: now.advanced(by: .seconds(5)))
        let renewed = tracker.start(key, audience: [bob], until: now.advanced(by: .seconds(10)))
        #expect(started && !renewed)
        let early = tracker.expire(now: now.advanced(by: .seconds(6)))
        #expect(early.isEmpty)
        let ended = tracker.expire(now: now.advanced(by: .seconds(10)))
        #expect(ended.map(\.0) == [key] && ended[0].1 == [bob])
        let stoppedAgain = tracker.stop(key)
        #expect(stoppedAgain == nil, "an expired signal is not ended twice")
    }

    @Test func disconnectEndsAllOfAUsersSignals() {
        var tracker = TypingTracker()
        let later = ContinuousClock.now.advanced(by: .seconds(5))
        let other = ConversationID.direct(.random(), .random())
        _ = tracker.start(.init(conversation: conversation, user: alice), audience: [bob], until: later)
        _ = tracker.start(.init(conversation: other, user: alice), audience: [bob], until: later)
        _ = tracker.start(.init(conversation: conversation, user: bob), audience: [alice], until: later)
        let ended = tracker.stopAll(of: alice)
        #expect(ended.count == 2)
        #expect(tracker.entries.count == 1)
    }
}

@Suite struct EventFrameEncoderTests {
    @Test func framesAreByteIdenticalToTheStandardEncodingForEveryKind() throws {
        let a = UserID.random(), b = UserID.random()
        let conversation = ConversationID.direct(a, b)
        let message = Message(
            id: .random(), conversationId: conversation, seq: 9, senderId: a, clientId: .random(),
            text: "quote \" backslash \\ newline \n emoji 🙂", createdAt: Timestamp(milliseconds: 1_700_000_000_000))
        var acted = message
        acted.editedAt = Timestamp(milliseconds: 1_700_000_000_500)
        acted.replyTo = ReplyQuote(seq: 3, senderId: b, text: "first\nsecond", deleted: false)
        acted.reactions = [Reaction(emoji: "👍🏽", count: 2, mine: true, userIds: [a, b])]
        let payloads: [StreamEvent.Payload] = [
            .message(message),
            .receipt(ReceiptUpdate(conversationId: conversation, userId: b, deliveredSeq: 9, readSeq: 8)),
            .conversation(
                ConversationInfo(
                    id: conversation, kind: .direct, createdAt: Timestamp(milliseconds: 5),
                    members: [
                        User(id: a, username: "a_user", displayName: "A", createdAt: Timestamp(milliseconds: 1))
                    ])),
            .messageUpdated(acted),
            .messageHidden(MessageRef(conversationId: conversation, seq: 9)),
        ]
        var encoder = EventFrameEncoder()
        for (index, payload) in payloads.enumerated() {
            for position in [Int64(1), 1_000_000_007] {
                let event = StreamEvent(position: position + Int64(index), payload: payload)
                let fast = try encoder.encode(event)
                let standard = String(decoding: try WireFormat.encoder().encode(ServerFrame.event(event)), as: UTF8.self)
                #expect(fast.text == standard)
                #expect(fast.position == event.position)
            }
        }
    }
}

/// ``MessageFrameJSON`` writes the bytes `WireFormat`'s encoder writes, for any text.
@Suite struct MessageFrameJSONTests {
    static func message(_ text: String, seq: Int64 = 42, createdAt: Int64 = 1_700_000_000_123) -> Message {
        let a = UserID.random(), b = UserID.random()
        return Message(
            id: .random(), conversationId: .direct(a, b), seq: seq, senderId: a, clientId: .random(), text: text,
            createdAt: Timestamp(milliseconds: createdAt))
    }

    static func standard(_ value: some Encodable) throws -> String {
        String(decoding: try WireFormat.encoder().encode(value), as: UTF8.self)
    }

    /// Every ASCII character (each control character, quote, backslash, slash), and text beyond ASCII.
    static let texts: [String] =
        (0..<128).map { String(UnicodeScalar(UInt8($0))) } + [
            "plain", "a/b</script>", "emoji 🙂👍🏽 and 日本語", "\u{2028}\u{2029}\u{FEFF}\u{7F}\u{85}", "e\u{301}",
            "line\nbreak\ttab\r\"q\" \\ \u{1}\u{1F}", String(repeating: "long ", count: 2000),
        ]

    @Test func messagesAreByteIdentical() throws {
        for text in Self.texts {
            let message = Self.message(text)
            #expect(MessageFrameJSON.message(message) == (try Self.standard(message)), "text \(Array(text.unicodeScalars))")
        }
        for (seq, createdAt) in [(Int64(1), Int64(0)), (.max, .max), (7, -1)] {
            let message = Self.message("x", seq: seq, createdAt: createdAt)
            #expect(MessageFrameJSON.message(message) == (try Self.standard(message)))
        }
    }

    @Test func sentFramesAreByteIdenticalWithAndWithoutRefAndPosition() throws {
        for text in ["hi", "quote \" and \\ and \n"] {
            let message = Self.message(text)
            for ref in [nil, "r1", "odd \"ref\" \\ \u{0}/"] {
                for position in [nil, Int64(1), 9_007_199_254_740_993] {
                    for duplicate in [false, true] {
                        let frame = ServerFrame.sent(ref: ref, message: message, duplicate: duplicate, position: position)
                        let fast = MessageFrameJSON.sent(ref: ref, message: message, duplicate: duplicate, position: position)
                        #expect(fast == (try Self.standard(frame)))
                    }
                }
            }
        }
    }
}
