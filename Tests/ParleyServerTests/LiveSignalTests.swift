import Foundation
import GRDB
import ParleyCore
import Testing
import HTTPTypes
import ParleyServer

/// Guarantee 6: typing and presence are ephemeral and only reach people who share a conversation.
@Suite struct LiveSignalTests {
    @Test func typingReachesTheOtherMemberAndExpiresOnItsOwn() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let id = try await api.send("hi", from: alice, to: bob).conversationId
            let a = try await api.socket(alice), b = try await api.socket(bob)
            a.send(.typing(conversationId: id, isTyping: true))
            try await b.typing(alice.id, isTyping: true)
            // Nobody says stop: the server ends it after its timeout (0.6 s in tests).
            try await b.typing(alice.id, isTyping: false)
            #expect(await a.inbox.frames.allSatisfy { if case .typing = $0 { false } else { true } }, "typing is not echoed to the typist")
        }
    }

    @Test func typingEndsAtOnceOnSendAndOnDisconnect() async throws {
        try await TestServer.run(configure: { $0.typingTimeoutSeconds = 60 }) { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let id = try await api.send("hi", from: alice, to: bob).conversationId
            let a = try await api.socket(alice), b = try await api.socket(bob)
            a.send(.typing(conversationId: id, isTyping: true))
            try await b.typing(alice.id, isTyping: true)
            a.send(.send(SendRequest(clientId: .random(), conversationId: id, text: "done typing")))
            try await b.typing(alice.id, isTyping: false)

            let again = try await api.socket(alice)
            again.send(.typing(conversationId: id, isTyping: true))
            _ = try await b.inbox.waitFor("second typing start") { frames in
                frames.filter { if case .typing(_, _, true) = $0 { true } else { false } }.count == 2 ? true : nil
            }
            await a.close()
            await again.close()
            _ = try await b.inbox.waitFor("typing end on disconnect") { frames in
                frames.filter { if case .typing(_, _, false) = $0 { true } else { false } }.count == 2 ? true : nil
            }
        }
    }

    /// What a send causes reaches each of the recipient's connections in order, whichever event loop
    /// they are on (the sender's is one of them): the reply that makes two people contacts before
    /// the presence it shares, a message before the end of its sender's typing. End to end, the
    /// loops' timing decides whether a wrong order would show; `LiveDeliveriesTests` holds a loop
    /// busy to make it show every time.
    @Test func aSendsEventsComeBeforeTheSignalsItCausesOnEveryConnection() async throws {
        try await TestServer.run(configure: { $0.typingTimeoutSeconds = 60 }) { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            var sockets: [TestSocket] = []
            for _ in 0..<4 { sockets.append(try await api.socket(alice)) }
            let b = try await api.socket(bob)
            let id = try await api.send("first", from: alice, to: bob).conversationId
            _ = try await b.message(seq: 1)
            b.send(.send(SendRequest(clientId: .random(), conversationId: id, text: "reply")))
            b.send(.typing(conversationId: id, isTyping: true))
            b.send(.send(SendRequest(clientId: .random(), conversationId: id, text: "second")))
            for socket in sockets {
                _ = try await socket.message(seq: 3)
                try await socket.typing(bob.id, isTyping: false)
                _ = try await socket.presence(bob.id, online: true)
                let frames = await socket.inbox.frames
                func index(ofMessage seq: Int64) -> Int? {
                    frames.firstIndex { if case .event(let e) = $0, case .message(let m) = e.payload, m.seq == seq { true } else { false } }
                }
                let present = frames.firstIndex { if case .presence(bob.id, true, _) = $0 { true } else { false } }
                let stopped = frames.firstIndex { if case .typing(_, bob.id, false) = $0 { true } else { false } }
                #expect(index(ofMessage: 2)! < present!, "\(frames)")
                #expect(index(ofMessage: 3)! < stopped!, "\(frames)")
            }
        }
    }

    @Test func typingInSomeoneElsesConversationIsRefused() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob"), eve = try await api.register("eve")
            let id = try await api.send("hi", from: alice, to: bob).conversationId
            let b = try await api.socket(bob), e = try await api.socket(eve)
            e.send(.typing(conversationId: id, isTyping: true))
            #expect(try await e.firstError().code == .conversationNotFound)
            e.send(.ping(ref: "after"))
            _ = try await e.inbox.waitFor("pong") { $0.contains(.pong(ref: "after")) ? true : nil }
            #expect(await b.inbox.frames.allSatisfy { if case .typing = $0 { false } else { true } })
        }
    }

    /// A contact hears of a close even while the database cannot write (here another connection
    /// holds SQLite's write lock; under load, a writer busy with a flood): last seen is recorded
    /// after the announcement, not before it.
    @Test func aCloseIsAnnouncedWhileTheDatabaseCannotWrite() async throws {
        let database = TestServer.temporaryDatabase()
        try await TestServer.run(database: database) { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let sent = try await api.send("hi", from: alice, to: bob)
            _ = try await api.send("hello", from: bob, in: sent.conversationId)
            let a = try await api.socket(alice), b = try await api.socket(bob)
            _ = try await b.presence(alice.id, online: true)
            var holding = Configuration()
            holding.allowsUnsafeTransactions = true  // the write lock outlives one access, on purpose
            holding.busyMode = .timeout(30)
            let blocker = try DatabaseQueue(path: database, configuration: holding)
            try blocker.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }
            await a.close()
            _ = try await b.presence(alice.id, online: false)
            try blocker.inDatabase { db in try db.execute(sql: "COMMIT") }
            try blocker.close()
        }
    }

    @Test func presenceGoesOnlyToContacts() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob"), eve = try await api.register("eve")
            let sent = try await api.send("hi", from: alice, to: bob)
            _ = try await api.send("hello", from: bob, in: sent.conversationId)
            let b = try await api.socket(bob), e = try await api.socket(eve)
            // Bob's snapshot on connect: alice has never been online.
            #expect(try await b.presence(alice.id, online: false) == nil)

            let a = try await api.socket(alice)
            _ = try await b.presence(alice.id, online: true)
            _ = try await a.presence(bob.id, online: true)  // alice's snapshot shows bob online
            let listed = try await api.request(.get, "/v1/conversations", token: bob.token).decode(API.ConversationList.self)
            #expect(listed.conversations[0].otherMember(than: bob.id)?.online == true)

            let beforeClose = Timestamp.now()
            await a.close()
            let aliceID = alice.id
            let lastSeen = try await b.inbox.waitFor("offline with last seen") { frames in
                frames.lazy.compactMap { frame -> Timestamp? in
                    if case .presence(aliceID, false, let seen?) = frame { seen } else { nil }
                }.first
            }
            #expect(lastSeen >= beforeClose)
            e.send(.ping(ref: "sync"))
            _ = try await e.inbox.waitFor("pong") { $0.contains(.pong(ref: "sync")) ? true : nil }
            #expect(await e.inbox.frames.allSatisfy { if case .presence = $0 { false } else { true } }, "eve shares no conversation")
        }
    }

    /// A stranger who writes first learns nothing of the other's presence until they reply; the
    /// reply introduces both, on every device.
    @Test func presenceIsSharedOnlyOnceBothHaveWrittenOnEveryDevice() async throws {
        try await TestServer.run { api in
            let alice = try await api.register("alice"), bob = try await api.register("bob")
            let phone = try await api.socket(bob), laptop = try await api.socket(bob)
            let a = try await api.socket(alice)
            a.send(.send(SendRequest(clientId: .random(), recipientId: bob.id, text: "first contact")))
            for device in [phone, laptop] { #expect(try await device.message(seq: 1).text == "first contact") }
            let conversation = try #require(try await api.conversations(of: alice).first)
            #expect(conversation.otherMember(than: alice.id)?.online == nil, "no presence for a stranger over REST")
            #expect(conversation.otherMember(than: alice.id)?.lastSeenAt == nil)
            for socket in [a, phone] {
                socket.send(.ping(ref: "sync"))
                _ = try await socket.inbox.waitFor("pong") { $0.contains(.pong(ref: "sync")) ? true : nil }
            }
            #expect(await a.inbox.frames.allSatisfy { if case .presence = $0 { false } else { true } }, "alice learned nothing of bob")
            #expect(await phone.inbox.frames.allSatisfy { if case .presence = $0 { false } else { true } }, "nor bob of alice")

            _ = try await api.send("hi back", from: bob, in: conversation.id)
            for device in [phone, laptop] { _ = try await device.presence(alice.id, online: true) }
            _ = try await a.presence(bob.id, online: true)
            #expect(try await api.conversations(of: alice).first?.otherMember(than: alice.id)?.online == true)
        }
    }
}
