import ParleyCore
import ParleyStore
import Testing

/// docs/protocol.md "Message actions", rule by rule, on every backend.
@Suite struct MessageActionConformanceTests {
    @Test(arguments: StoreBackend.all)
    func aReplyQuotesTheOriginalAsItIsNow(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let original = try await world.store.send("first line\nsecond line", from: world.ada.id, to: .conversation(world.direct)).message
        let reply = try await world.store.send(
            NewMessage(sender: world.grace.id, clientId: .random(), target: .conversation(world.direct), text: "yes", replyToSeq: original.seq),
            now: .now())
        #expect(reply.message.replyTo == ReplyQuote(seq: original.seq, senderId: world.ada.id, preview: "first line", deleted: false))
        let retry = try await world.store.send(
            NewMessage(sender: world.grace.id, clientId: reply.message.clientId, target: .conversation(world.direct), text: "yes"), now: .now())
        #expect(retry.duplicate && retry.message.replyTo?.seq == original.seq, "a retry answers the stored reply")
        _ = try await world.act(world.ada, original.seq, .edit("edited away"))
        #expect(try await world.page(world.grace).last?.replyTo?.preview == "edited away", "the quote never shows text edited away")
        _ = try await world.act(world.ada, original.seq, .delete)
        #expect(try await world.page(world.ada).last?.replyTo == ReplyQuote(seq: original.seq, senderId: world.ada.id, preview: "", deleted: true))
        // Nothing to answer outside the conversation, at an entry, or past the end.
        let group = try await world.group(with: [world.grace.id])
        for seq in [Int64(1), 999] {
            await #expect(throws: StoreError.messageNotFound) {
                _ = try await world.store.send(
                    NewMessage(sender: world.ada.id, clientId: .random(), target: .conversation(group), text: "x", replyToSeq: seq), now: .now())
            }
        }
    }

    @Test(arguments: StoreBackend.all)
    func oneReactionPerPersonReplacedOrClearedAndNeverUnread(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let message = try await world.store.send("lunch?", from: world.ada.id, to: .conversation(world.direct)).message
        let unreadBefore = try await world.store.conversation(world.direct, as: world.grace.id).unreadCount
        let first = try await world.act(world.grace, message.seq, .react("👍"))
        #expect(first.message.reactions == [Reaction(emoji: "👍", count: 1, mine: true, userIds: [world.grace.id])])
        let updates = first.deliveries.compactMap { delivery -> (UserID, Message)? in
            if case .messageUpdated(let m) = delivery.event.payload { (delivery.recipient, m) } else { nil }
        }
        #expect(Set(updates.map(\.0)) == [world.ada.id, world.grace.id])
        #expect(updates.first { $0.0 == world.ada.id }?.1.reactions?.first?.mine == false, "mine is per recipient")
        _ = try await world.act(world.ada, message.seq, .react("👍"))
        let replaced = try await world.act(world.grace, message.seq, .react("❤️"))
        #expect(replaced.message.reactions?.map(\.emoji) == ["👍", "❤️"] && replaced.message.reactions?.map(\.count) == [1, 1])
        let same = try await world.act(world.grace, message.seq, .react("❤️"))
        #expect(same.deliveries.isEmpty && !same.duplicate, "the same reaction again changes nothing")
        let cleared = try await world.act(world.grace, message.seq, .react(nil))
        #expect(cleared.message.reactions == [Reaction(emoji: "👍", count: 1, mine: false, userIds: [world.ada.id])])
        #expect(try await world.store.conversation(world.direct, as: world.grace.id).unreadCount == unreadBefore)
        #expect(try await world.page(world.grace).last?.reactions?.map(\.emoji) == ["👍"])
        let group = try await world.group(with: [world.grace.id])
        await #expect(throws: StoreError.invalidAction) { _ = try await world.act(world.grace, 1, .react("👍"), in: group) }
    }

    @Test(arguments: StoreBackend.all)
    func onlyTheSenderEditsWithinTheWindowAndVersionsAreKept(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let sent = Timestamp.now()
        let message = try await world.store.send("helo", from: world.ada.id, to: .conversation(world.direct), at: sent).message
        let listBefore = try await world.store.conversation(world.direct, as: world.grace.id)
        await #expect(throws: StoreError.forbidden("Only the sender can edit a message.")) {
            _ = try await world.act(world.grace, message.seq, .edit("hijack"))
        }
        let edited = try await world.act(world.ada, message.seq, .edit("hello"))
        #expect(edited.message.text == "hello" && edited.message.editedAt != nil)
        _ = try await world.act(world.ada, message.seq, .edit("hello!"))
        let unchanged = try await world.act(world.ada, message.seq, .edit("hello!"))
        #expect(unchanged.deliveries.isEmpty, "the same text again changes nothing")
        let versions = try await world.store.versions(in: world.direct, seq: message.seq, as: world.grace.id)
        #expect(versions.map(\.text) == ["helo", "hello"])
        let listAfter = try await world.store.conversation(world.direct, as: world.grace.id)
        #expect(listAfter.lastActivityAt == listBefore.lastActivityAt && listAfter.unreadCount == listBefore.unreadCount)
        #expect(listAfter.lastMessage?.text == "hello!", "the preview shows the last message's new text")
        let late = Timestamp(milliseconds: sent.milliseconds + MessageActionPlan.defaultWindowMilliseconds + 1)
        await #expect(throws: StoreError.editWindowClosed) {
            _ = try await world.act(world.ada, message.seq, .edit("too late"), at: late)
        }
        await #expect(throws: StoreError.conversationNotFound) {
            _ = try await world.act(world.eve, message.seq, .edit("stranger"))
        }
    }

    @Test(arguments: StoreBackend.all)
    func deleteForEveryoneLeavesATombstoneAndTakesEverythingWithIt(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let sent = Timestamp.now()
        let message = try await world.store.send("secret", from: world.ada.id, to: .conversation(world.direct), at: sent).message
        _ = try await world.act(world.ada, message.seq, .edit("secret 2"))
        _ = try await world.act(world.grace, message.seq, .react("😮"))
        let unreadBefore = try await world.store.conversation(world.direct, as: world.grace.id).unreadCount
        await #expect(throws: StoreError.forbidden("Only the sender or a group admin can delete a message for everyone.")) {
            _ = try await world.act(world.grace, message.seq, .delete)
        }
        let late = Timestamp(milliseconds: sent.milliseconds + MessageActionPlan.defaultWindowMilliseconds + 1)
        await #expect(throws: StoreError.deleteWindowClosed) { _ = try await world.act(world.ada, message.seq, .delete, at: late) }
        let deleted = try await world.act(world.ada, message.seq, .delete)
        #expect(deleted.message.isDeleted && deleted.message.text.isEmpty && deleted.message.reactions == nil)
        #expect(deleted.deliveries.count == 2)
        #expect(try await world.store.versions(in: world.direct, seq: message.seq, as: world.ada.id).isEmpty)
        let summary = try await world.store.conversation(world.direct, as: world.grace.id)
        #expect(summary.unreadCount == unreadBefore - 1 && summary.lastMessage?.isDeleted == true)
        #expect(try await world.page(world.grace).last.map { $0.isDeleted && $0.seq == message.seq } == true, "the tombstone keeps its seq")
        await #expect(throws: StoreError.messageDeleted) { _ = try await world.act(world.grace, message.seq, .react("👍")) }
        await #expect(throws: StoreError.messageDeleted) { _ = try await world.act(world.ada, message.seq, .edit("back")) }
        #expect(try await world.act(world.ada, message.seq, .delete).deliveries.isEmpty, "deleting twice changes nothing")
    }

    @Test(arguments: StoreBackend.all)
    func deleteForMeHidesOnlyForMe(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let kept = try await world.store.send("kept", from: world.ada.id, to: .conversation(world.direct)).message
        let hiddenOne = try await world.store.send("hide me", from: world.ada.id, to: .conversation(world.direct)).message
        let unreadBefore = try await world.store.conversation(world.direct, as: world.grace.id).unreadCount
        let hidden = try await world.act(world.grace, hiddenOne.seq, .hide)
        #expect(hidden.deliveries.map(\.recipient) == [world.grace.id])
        #expect(hidden.deliveries.first.map { $0.event.payload == .messageHidden(MessageRef(conversationId: world.direct, seq: hiddenOne.seq)) } == true)
        #expect(try await world.page(world.grace).map(\.seq).contains(hiddenOne.seq) == false)
        #expect(try await world.page(world.ada).map(\.seq).contains(hiddenOne.seq))
        let summary = try await world.store.conversation(world.direct, as: world.grace.id)
        #expect(summary.lastMessage?.seq == kept.seq && summary.unreadCount == unreadBefore - 1)
        #expect(try await world.store.conversation(world.direct, as: world.ada.id).lastMessage?.seq == hiddenOne.seq)
        #expect(try await world.act(world.grace, hiddenOne.seq, .hide).deliveries.isEmpty)
        // What it becomes is no longer hers to receive: an edit and a reaction reach Ada alone.
        for change in [NewMessageAction.Change.edit("hide me, edited"), .react("👍")] {
            #expect(try await world.act(world.ada, hiddenOne.seq, change).deliveries.map(\.recipient) == [world.ada.id], "\(change)")
        }
    }

    @Test(arguments: StoreBackend.all)
    func aRetryAppliesNothingAndAReusedClientIdConflicts(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let message = try await world.store.send("hi", from: world.ada.id, to: .conversation(world.direct)).message
        let clientId = ClientMessageID.random()
        let first = try await world.act(world.grace, message.seq, .react("👍"), clientId: clientId)
        _ = try await world.act(world.grace, message.seq, .react("🙏"))
        let retry = try await world.act(world.grace, message.seq, .react("👍"), clientId: clientId)
        #expect(!first.duplicate && retry.duplicate && retry.deliveries.isEmpty)
        #expect(retry.message.reactions?.map(\.emoji) == ["🙏"], "the retry answers the message as it is now, not reapplied")
        await #expect(throws: StoreError.clientIdConflict) { _ = try await world.act(world.grace, message.seq, .hide, clientId: clientId) }
        let other = try await world.store.send("other", from: world.ada.id, to: .conversation(world.direct)).message
        await #expect(throws: StoreError.clientIdConflict) { _ = try await world.act(world.grace, other.seq, .react("👍"), clientId: clientId) }
    }

    @Test(arguments: StoreBackend.all)
    func groupsActOnlyInsideMembershipAndAdminsDeleteAnything(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let group = try await world.group(with: [world.grace.id])
        let early = try await world.store.send("before alan", from: world.grace.id, to: .conversation(group)).message
        _ = try await world.store.changeGroup(
            MembershipChange(
                actor: world.ada.id, clientId: .random(), conversation: group, action: .add([world.alan.id], shareHistory: false), maxMembers: 256),
            now: .now())
        await #expect(throws: StoreError.messageNotFound) { _ = try await world.act(world.alan, early.seq, .react("👍"), in: group) }
        let reacted = try await world.act(world.ada, early.seq, .react("👍"), in: group)
        #expect(Set(reacted.deliveries.map(\.recipient)) == [world.ada.id, world.grace.id], "not to a member who cannot see it")
        let alans = try await world.store.send("from alan", from: world.alan.id, to: .conversation(group)).message
        await #expect(throws: StoreError.forbidden("Only the sender or a group admin can delete a message for everyone.")) {
            _ = try await world.act(world.grace, alans.seq, .delete, in: group)
        }
        let late = Timestamp(milliseconds: Timestamp.now().milliseconds + MessageActionPlan.defaultWindowMilliseconds * 10)
        #expect(try await world.act(world.ada, alans.seq, .delete, in: group, at: late).message.isDeleted, "the owner deletes at any time")
        // Removed: may still hide what they saw, nothing else, and sees no edit made after.
        let adas = try await world.store.send("see you at 5", from: world.ada.id, to: .conversation(group)).message
        _ = try await world.store.changeGroup(
            MembershipChange(actor: world.ada.id, clientId: .random(), conversation: group, action: .remove(world.grace.id), maxMembers: 256), now: .now())
        await #expect(throws: StoreError.noLongerMember) {
            _ = try await world.act(world.grace, early.seq, .react("😢"), in: group)
        }
        #expect(try await world.act(world.grace, early.seq, .hide, in: group).deliveries.count == 1)
        _ = try await world.act(world.ada, adas.seq, .edit("see you at 6"), in: group, at: Timestamp(milliseconds: Timestamp.now().milliseconds + 5))
        let gracesCopy = try await world.store.messages(in: group, as: world.grace.id, query: HistoryQuery(limit: 50)).messages.first { $0.seq == adas.seq }
        #expect(gracesCopy?.text == "see you at 5" && gracesCopy?.editedAt == nil, "the text when she left")
        let alansCopy = try await world.store.messages(in: group, as: world.alan.id, query: HistoryQuery(limit: 50)).messages.first { $0.seq == adas.seq }
        #expect(alansCopy?.text == "see you at 6" && alansCopy?.editedAt != nil)
        // Deleted after: her tombstone does not tell her it was edited after she left (nobody's does).
        _ = try await world.act(world.ada, adas.seq, .delete, in: group)
        for reader in [world.grace, world.alan] {
            let tombstone = try await world.store.messages(in: group, as: reader.id, query: HistoryQuery(limit: 50)).messages.first { $0.seq == adas.seq }
            #expect(tombstone?.isDeleted == true && tombstone?.editedAt == nil && tombstone?.text == "")
        }
        await #expect(throws: StoreError.conversationNotFound) { _ = try await world.act(world.eve, early.seq, .hide, in: group) }
    }

    @Test(arguments: StoreBackend.all)
    func aReplayShowsEachMessageAsItIsNow(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let head = try await world.store.streamHead(of: world.grace.id)
        let message = try await world.store.send("typo", from: world.ada.id, to: .conversation(world.direct)).message
        _ = try await world.act(world.ada, message.seq, .edit("fixed"))
        _ = try await world.act(world.ada, message.seq, .react("👍"))
        let events = try await world.store.allEvents(of: world.grace.id, after: head)
        let kinds = events.map { event -> String in
            switch event.payload {
            case .message(let m): "message:\(m.text)"
            case .messageUpdated(let m): "updated:\(m.text):\(m.reactions?.count ?? 0)"
            default: "other"
            }
        }
        #expect(kinds == ["message:fixed", "updated:fixed:1", "updated:fixed:1"])
        #expect(events.map(\.position) == Array(head + 1...head + 3))
    }
}

/// The rules the review of the first version found broken.
@Suite struct MessageActionReviewConformanceTests {
    @Test(arguments: StoreBackend.all)
    func aReusedClientIdTellsAStrangerNothingAboutAConversation(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let theirs = try await world.store.send("private", from: world.ada.id, to: .conversation(world.direct)).message
        let eves = try await world.store.send("hi", from: world.eve.id, to: .user(world.alan.id)).message
        let used = ClientMessageID.random()
        _ = try await world.store.act(
            NewMessageAction(actor: world.eve.id, clientId: used, conversation: eves.conversationId, seq: eves.seq, change: .react("👍")), now: .now())
        for seq in [theirs.seq, 999] {
            await #expect(throws: StoreError.clientIdConflict, "seq \(seq): the same answer whether it exists or not") {
                _ = try await world.act(world.eve, seq, .react("👍"), clientId: used)
            }
        }
    }

    @Test(arguments: StoreBackend.all)
    func hidingNeverShowsAPreviewFromOutsideMyMembership(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let group = try await world.group(with: [world.grace.id])
        _ = try await world.store.send("before alan joined", from: world.grace.id, to: .conversation(group))
        let added = try await world.store.changeGroup(
            MembershipChange(
                actor: world.ada.id, clientId: .random(), conversation: group, action: .add([world.alan.id], shareHistory: false), maxMembers: 256),
            now: .now())
        let joinSeq = try #require(added.entry?.seq)
        _ = try await world.act(world.alan, joinSeq, .hide, in: group)
        let summary = try await world.store.conversation(group, as: world.alan.id)
        #expect(summary.lastMessage == nil, "not the message before he joined: \(summary.lastMessage?.text ?? "")")
    }

    @Test(arguments: StoreBackend.all)
    func aFormerMemberSeesOnlyTheVersionsFromBeforeTheyLeft(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let group = try await world.group(with: [world.grace.id])
        let message = try await world.store.send("plan A", from: world.ada.id, to: .conversation(group)).message
        let start = Timestamp.now().milliseconds
        let at = { (offset: Int64) in Timestamp(milliseconds: start + offset) }
        _ = try await world.act(world.ada, message.seq, .edit("plan A2"), in: group, at: at(1))
        let reply = try await world.store.send(
            NewMessage(sender: world.ada.id, clientId: .random(), target: .conversation(group), text: "agreed", replyToSeq: message.seq), now: at(2)
        ).message
        _ = try await world.act(world.grace, message.seq, .react("👍"), in: group, at: at(3))
        _ = try await world.act(world.grace, reply.seq, .react("👍"), in: group, at: at(4))
        _ = try await world.store.changeGroup(
            MembershipChange(actor: world.grace.id, clientId: .random(), conversation: group, action: .leave, maxMembers: 256), now: at(10))
        _ = try await world.act(world.ada, message.seq, .edit("plan B secret"), in: group, at: at(20))
        _ = try await world.act(world.ada, message.seq, .edit("plan C secret"), in: group, at: at(30))
        _ = try await world.act(world.ada, message.seq, .react("🎉"), in: group, at: at(31))
        _ = try await world.act(world.ada, reply.seq, .react("🎉"), in: group, at: at(32))
        #expect(try await world.store.versions(in: group, seq: message.seq, as: world.grace.id).map(\.text) == ["plan A"])
        #expect(try await world.store.versions(in: group, seq: message.seq, as: world.ada.id).map(\.text) == ["plan A", "plan A2", "plan B secret"])
        // Nothing that changed after she left reaches her: not the text, not the quote, not who reacted.
        let gracesCopy = try await world.store.messages(in: group, as: world.grace.id, query: HistoryQuery(limit: 50)).messages
        let original = try #require(gracesCopy.first { $0.seq == message.seq }), answer = try #require(gracesCopy.first { $0.seq == reply.seq })
        #expect(original.text == "plan A2" && original.reactions?.map(\.emoji) == ["👍"])
        #expect(answer.replyTo?.preview == "plan A2" && answer.reactions?.map(\.emoji) == ["👍"])
        let adasCopy = try await world.store.messages(in: group, as: world.ada.id, query: HistoryQuery(limit: 50)).messages
        #expect(adasCopy.first { $0.seq == reply.seq }?.replyTo?.preview == "plan C secret", "members see the quote as it is now")
        #expect(adasCopy.first { $0.seq == reply.seq }?.reactions?.count == 2)
        // Her replay says the same, event by event, whichever event carries the message.
        let replayed = try await world.store.allEvents(of: world.grace.id).compactMap { event -> Message? in
            switch event.payload {
            case .message(let message), .messageUpdated(let message): message.conversationId == group ? message : nil
            default: nil
            }
        }
        // The creation entry, the message, its edit, the reply, the two reactions, her leaving.
        let order = [message.seq - 1, message.seq, message.seq, reply.seq, message.seq, reply.seq, reply.seq + 1]
        #expect(replayed.map(\.seq) == order)
        for copy in replayed where copy.seq == message.seq {
            #expect(copy.text == "plan A2" && copy.reactions?.map(\.emoji) == ["👍"], "replayed: \(copy.text) \(copy.reactions ?? [])")
        }
        for copy in replayed where copy.seq == reply.seq {
            #expect(copy.replyTo?.preview == "plan A2" && copy.reactions?.map(\.emoji) == ["👍"], "replayed: \(copy.replyTo?.preview ?? "")")
        }
        let found = try await world.store.search(try SearchQuery.parse("secret"), as: world.grace.id, limit: 10, offset: 0)
        #expect(found.isEmpty, "the text written after she left: \(found.map(\.text))")
        #expect(try await world.store.search(try SearchQuery.parse("secret"), as: world.ada.id, limit: 10, offset: 0).count == 1)
        #expect(try await world.store.search(try SearchQuery.parse("agreed"), as: world.grace.id, limit: 10, offset: 0).count == 1)
    }

    @Test(arguments: StoreBackend.all)
    func aRetriedSendIsAnsweredAsTheMessageIsNow(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let first = try await world.store.send("first", from: world.ada.id, to: .conversation(world.direct)).message
        let clientId = ClientMessageID.random()
        let reply = NewMessage(sender: world.ada.id, clientId: clientId, target: .user(world.grace.id), text: "oops", replyToSeq: first.seq)
        let sent = try await world.store.send(reply, now: .now())
        #expect(sent.message.replyTo?.seq == first.seq)
        _ = try await world.act(world.ada, sent.message.seq, .delete)
        var retry = reply
        retry.replyToSeq = 999
        let answer = try await world.store.send(retry, now: .now())
        #expect(answer.duplicate && answer.message.isDeleted && answer.message.text.isEmpty && answer.message.replyTo?.seq == first.seq)
        await #expect(throws: StoreError.invalidRecipient) {
            _ = try await world.store.send(
                NewMessage(sender: world.ada.id, clientId: .random(), target: .user(world.ada.id), text: "me", replyToSeq: 1), now: .now())
        }
        await #expect(throws: StoreError.userNotFound) {
            _ = try await world.store.send(
                NewMessage(sender: world.ada.id, clientId: .random(), target: .user(.random()), text: "who", replyToSeq: 1), now: .now())
        }
        await #expect(throws: StoreError.messageNotFound, "no conversation with Eve yet: nothing to answer") {
            _ = try await world.store.send(
                NewMessage(sender: world.ada.id, clientId: .random(), target: .user(world.eve.id), text: "hi", replyToSeq: 1), now: .now())
        }
    }
}

/// Ada and Grace, who have written to each other; Alan, Ada's contact; Eve, a stranger.
struct ActionWorld {
    let store: any ParleyStore
    let ada: User, grace: User, alan: User, eve: User
    let direct: ConversationID

    init(_ backend: StoreBackend) async throws {
        let groups = try await GroupWorld(backend)
        (store, ada, grace, alan, eve) = (groups.store, groups.ada, groups.grace, groups.alan, groups.eve)
        direct = .direct(ada.id, grace.id)
    }

    func group(with members: [UserID]) async throws -> ConversationID {
        try await store.createGroup(NewGroup(creator: ada.id, clientId: .random(), title: "Group", memberIds: members, maxMembers: 256), now: .now())
            .conversationId
    }

    func act(
        _ user: User, _ seq: Int64, _ change: NewMessageAction.Change, in conversation: ConversationID? = nil, clientId: ClientMessageID = .random(),
        at now: Timestamp = .now()
    ) async throws -> ActionOutcome {
        try await store.act(
            NewMessageAction(actor: user.id, clientId: clientId, conversation: conversation ?? direct, seq: seq, change: change), now: now)
    }

    func page(_ user: User) async throws -> [Message] {
        try await store.messages(in: direct, as: user.id, query: HistoryQuery(limit: 50)).messages
    }
}
