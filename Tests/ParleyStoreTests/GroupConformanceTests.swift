import ParleyCore
import ParleyStore
import Testing

/// docs/protocol.md "Groups", rule by rule, on every backend.
@Suite struct GroupConformanceTests {
    @Test(arguments: StoreBackend.all)
    func createAddsContactsInvitesStrangersAndIsIdempotent(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let clientId = ClientMessageID.random()
        let request = NewGroup(creator: world.ada.id, clientId: clientId, title: "Trip", memberIds: [world.grace.id, world.eve.id], maxMembers: 256)
        let created = try await world.store.createGroup(request, now: .now())
        #expect(!created.duplicate && created.invited == [world.eve.id])
        #expect(created.entry?.seq == 1 && created.entry?.entry == GroupEntry(type: .created, userIds: [world.grace.id], title: "Trip"))
        let retry = try await world.store.createGroup(request, now: .now())
        #expect(retry.duplicate && retry.conversationId == created.conversationId && retry.entry?.id == created.entry?.id)
        #expect(retry.invited == [world.eve.id])
        let summary = try await world.store.conversation(created.conversationId, as: world.ada.id)
        #expect(summary.kind == .group && summary.title == "Trip")
        #expect(summary.members.map(\.userId).sorted() == [world.ada.id, world.grace.id].sorted())
        #expect(summary.members.first { $0.userId == world.ada.id }?.role == .owner)
        #expect(summary.members.first { $0.userId == world.grace.id }?.role == .member)
        #expect(summary.unreadCount == 0, "entries never count as unread")
        // The stranger sees nothing of the group but the invitation.
        await #expect(throws: StoreError.conversationNotFound) { try await world.store.conversation(created.conversationId, as: world.eve.id) }
        let invitations = try await world.store.invitations(of: world.eve.id)
        #expect(invitations.map(\.title) == ["Trip"] && invitations.first?.inviter.id == world.ada.id && invitations.first?.memberCount == 2)
        let eveEvents = try await world.store.allEvents(of: world.eve.id)
        #expect(eveEvents.contains { if case .invitation(let i) = $0.payload { i.conversationId == created.conversationId } else { false } })
        #expect(!eveEvents.contains { if case .message(let m) = $0.payload { m.conversationId == created.conversationId } else { false } })
        // Grace learns of the group before its first entry.
        let graceKinds = try await world.store.allEvents(of: world.grace.id).compactMap { event -> String? in
            switch event.payload {
            case .conversation(let info) where info.id == created.conversationId: "conversation:\(info.title ?? "")"
            case .message(let message) where message.conversationId == created.conversationId: "entry"
            default: nil
            }
        }
        #expect(graceKinds == ["conversation:Trip", "entry"])
    }

    @Test(arguments: StoreBackend.all)
    func aBadMemberCreatesNothing(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        func create(_ members: [UserID], max: Int = 256) async throws {
            _ = try await world.store.createGroup(
                NewGroup(creator: world.ada.id, clientId: .random(), title: "T", memberIds: members, maxMembers: max), now: .now())
        }
        await #expect(throws: StoreError.self) { try await create([world.grace.id, UserID.random()]) }
        await #expect(throws: StoreError.self) { try await create([world.grace.id, world.grace.id]) }
        await #expect(throws: StoreError.self) { try await create([world.ada.id]) }
        await #expect(throws: StoreError.self) { try await create([]) }
        await #expect(throws: StoreError.groupFull(limit: 2)) { try await create([world.grace.id, world.alan.id], max: 2) }
        #expect(try await world.store.conversations(of: world.ada.id, limit: 50, before: nil).allSatisfy { $0.kind == .direct })
        #expect(try await world.store.conversations(of: world.grace.id, limit: 50, before: nil).allSatisfy { $0.kind == .direct })
    }

    @Test(arguments: StoreBackend.all)
    func historyStartsAtTheJoinUnlessSharedAndEndsAtRemoval(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id])
        _ = try await world.store.send("before alan", from: world.grace.id, to: .conversation(group))
        let added = try await world.change(group, .add([world.alan.id], shareHistory: false))
        let joinSeq = try #require(added.entry?.seq)
        _ = try await world.store.send("hello alan", from: world.ada.id, to: .conversation(group))
        var alanSees = try await world.store.messages(in: group, as: world.alan.id, query: HistoryQuery(limit: 50)).messages.map(\.seq)
        #expect(alanSees == [joinSeq, joinSeq + 1])
        // Removed: keeps what he saw up to his removal, and nothing after.
        let removed = try await world.change(group, .remove(world.alan.id))
        _ = try await world.store.send("after alan", from: world.ada.id, to: .conversation(group))
        alanSees = try await world.store.messages(in: group, as: world.alan.id, query: HistoryQuery(limit: 50)).messages.map(\.seq)
        let removedSeq = try #require(removed.entry?.seq)
        #expect(alanSees == [joinSeq, joinSeq + 1, removedSeq])
        let alanEvents = try await world.store.allEvents(of: world.alan.id).compactMap { event -> String? in
            if case .message(let message) = event.payload, message.conversationId == group { message.text } else { nil }
        }
        #expect(!alanEvents.contains("after alan") && alanEvents.contains("hello alan"))
        let former = try await world.store.conversation(group, as: world.alan.id)
        #expect(former.leftSeq == removed.entry?.seq && former.members.isEmpty && former.lastMessage?.entry?.type == .removed)
        #expect(former.unreadCount == 0 && former.mentionCount == 0, "nothing of a group one is out of stays unread")
        #expect(try await world.store.conversations(of: world.alan.id, limit: 50, before: nil).contains { $0.id == group })
        await #expect(throws: StoreError.conversationNotFound) {
            try await world.store.send("let me in", from: world.alan.id, to: .conversation(group))
        }
        await #expect(throws: StoreError.conversationNotFound) {
            try await world.store.updateReceipt(in: group, member: world.alan.id, deliveredSeq: 1, readSeq: 1, now: .now())
        }
        // Re-added with shared history: sees everything, the gap included.
        let again = try await world.change(group, .add([world.alan.id], shareHistory: true))
        let all = try await world.store.messages(in: group, as: world.alan.id, query: HistoryQuery(limit: 50)).messages.map(\.seq)
        let againSeq = try #require(again.entry?.seq)
        #expect(all == Array(1...againSeq))
        #expect(try await world.store.conversation(group, as: world.alan.id).leftSeq == nil)
    }

    @Test(arguments: StoreBackend.all)
    func reAddedWithoutSharingTheGapStaysHidden(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        let left = try await world.store.changeGroup(
            MembershipChange(actor: world.alan.id, clientId: .random(), conversation: group, action: .leave, maxMembers: 256), now: .now())
        let gap = try await world.store.send("while away", from: world.ada.id, to: .conversation(group))
        let back = try await world.change(group, .add([world.alan.id], shareHistory: false))
        let seen = try await world.store.messages(in: group, as: world.alan.id, query: HistoryQuery(limit: 50)).messages.map(\.seq)
        #expect(!seen.contains(gap.message.seq))
        let (leftSeq, backSeq) = (try #require(left.entry?.seq), try #require(back.entry?.seq))
        #expect(seen.contains(leftSeq) && seen.contains(backSeq))
    }

    /// A reply's quote of a message outside a member's spans names its writer and nothing of what it
    /// says: for a newcomer without the earlier history and for a re-added member's gap, in live
    /// events, pages, the replay and updates of the reply.
    @Test(arguments: StoreBackend.all)
    func aQuoteOfWhatAMemberMayNotSeeIsHidden(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id])
        let early = try await world.store.send("the early secret", from: world.grace.id, to: .conversation(group)).message
        _ = try await world.change(group, .add([world.alan.id], shareHistory: false))
        func reply(by user: User, to seq: Int64) async throws -> SendOutcome {
            try await world.store.send(
                NewMessage(sender: user.id, clientId: .random(), target: .conversation(group), text: "about that", replyToSeq: seq), now: .now())
        }
        func carried(_ deliveries: [Delivery], to user: User) -> Message? {
            deliveries.lazy.compactMap { delivery -> Message? in
                guard delivery.recipient == user.id else { return nil }
                switch delivery.event.payload {
                case .message(let message), .messageUpdated(let message): return message
                default: return nil
                }
            }.first
        }
        func page(_ user: User, _ seq: Int64) async throws -> Message? {
            try await world.store.messages(in: group, as: user.id, query: HistoryQuery(limit: 50)).messages.first { $0.seq == seq }
        }
        let answer = try await reply(by: world.ada, to: early.seq)
        let hidden = ReplyQuote.hidden(seq: early.seq, senderId: world.grace.id)
        #expect(carried(answer.deliveries, to: world.alan)?.replyTo == hidden, "live, to the newcomer")
        #expect(carried(answer.deliveries, to: world.grace)?.replyTo?.preview == "the early secret", "live, to a member who saw it")
        #expect(answer.message.replyTo?.preview == "the early secret", "the answer to its writer")
        #expect(try await page(world.alan, answer.message.seq)?.replyTo == hidden)
        #expect(try await page(world.grace, answer.message.seq)?.replyTo?.hidden == nil)
        let reacted = try await world.store.act(
            NewMessageAction(actor: world.alan.id, clientId: .random(), conversation: group, seq: answer.message.seq, change: .react("👍")), now: .now())
        #expect(reacted.message.replyTo == hidden && carried(reacted.deliveries, to: world.alan)?.replyTo == hidden)
        #expect(carried(reacted.deliveries, to: world.grace)?.replyTo?.preview == "the early secret", "an update keeps the quote for those who saw it")
        let replayed = try await world.store.allEvents(of: world.alan.id).compactMap { event -> Message? in
            switch event.payload {
            case .message(let message), .messageUpdated(let message): message.seq == answer.message.seq ? message : nil
            default: nil
            }
        }
        #expect(replayed.count == 2 && replayed.allSatisfy { $0.replyTo == hidden }, "the replay: \(replayed.map(\.replyTo))")
        // A re-added member's gap: hidden in a quote as in the history.
        _ = try await world.change(group, .remove(world.alan.id))
        let gap = try await world.store.send("said while alan was out", from: world.grace.id, to: .conversation(group)).message
        _ = try await world.change(group, .add([world.alan.id], shareHistory: false))
        let gapAnswer = try await reply(by: world.grace, to: gap.seq)
        let gapHidden = ReplyQuote.hidden(seq: gap.seq, senderId: world.grace.id)
        #expect(carried(gapAnswer.deliveries, to: world.alan)?.replyTo == gapHidden)
        #expect(try await page(world.alan, gapAnswer.message.seq)?.replyTo == gapHidden)
        #expect(carried(gapAnswer.deliveries, to: world.ada)?.replyTo?.preview == "said while alan was out")
        // What he saw himself stays quoted.
        let seen = try await reply(by: world.ada, to: answer.message.seq)
        #expect(carried(seen.deliveries, to: world.alan)?.replyTo?.preview == "about that")
    }

    @Test(arguments: StoreBackend.all)
    func rolesDecideWhoMayDoWhat(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        func act(_ actor: User, _ action: MembershipChange.Action) async throws -> GroupOutcome {
            try await world.store.changeGroup(
                MembershipChange(actor: actor.id, clientId: .random(), conversation: group, action: action, maxMembers: 256), now: .now())
        }
        await #expect(throws: StoreError.forbidden("Only admins can remove members.")) { try await act(world.grace, .remove(world.alan.id)) }
        await #expect(throws: StoreError.forbidden("Only admins can rename the group.")) { try await act(world.grace, .rename("X")) }
        await #expect(throws: StoreError.self) { try await act(world.grace, .setRole(world.alan.id, .admin)) }
        _ = try await act(world.ada, .setRole(world.grace.id, .admin))
        _ = try await act(world.grace, .rename("Renamed"))
        #expect(try await world.store.conversation(group, as: world.alan.id).title == "Renamed")
        await #expect(throws: StoreError.self) { try await act(world.grace, .remove(world.ada.id)) }
        await #expect(throws: StoreError.self) { try await act(world.grace, .setRole(world.alan.id, .admin)) }
        await #expect(throws: StoreError.invalidRole) { try await act(world.ada, .setRole(world.alan.id, .owner)) }
        await #expect(throws: StoreError.memberNotFound) { try await act(world.ada, .remove(world.eve.id)) }
        await #expect(throws: StoreError.invalidMembers("\(world.alan.id.rawValue) is already a member.")) {
            try await act(world.ada, .add([world.alan.id], shareHistory: false))
        }
        // Not a member at all: the same 404 as no such group.
        await #expect(throws: StoreError.conversationNotFound) { try await act(world.eve, .rename("mine")) }
        await #expect(throws: StoreError.conversationNotFound) {
            try await world.store.changeGroup(
                MembershipChange(actor: world.ada.id, clientId: .random(), conversation: .newGroup(), action: .leave, maxMembers: 256), now: .now())
        }
    }

    @Test(arguments: StoreBackend.all)
    func theLongestStandingAdminSucceedsTheOwnerAndTheLastToLeaveClosesIt(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        _ = try await world.change(group, .setRole(world.alan.id, .admin))
        func leave(_ user: User) async throws -> GroupOutcome {
            try await world.store.changeGroup(
                MembershipChange(actor: user.id, clientId: .random(), conversation: group, action: .leave, maxMembers: 256), now: .now())
        }
        let adaLeft = try await leave(world.ada)
        #expect(adaLeft.entry?.entry == GroupEntry(type: .left, userIds: [world.alan.id], role: .owner))
        let summary = try await world.store.conversation(group, as: world.grace.id)
        #expect(summary.members.first { $0.userId == world.alan.id }?.role == .owner)
        let alanLeft = try await leave(world.alan)
        #expect(alanLeft.entry?.entry?.userIds == [world.grace.id], "no admin left: the longest-standing member")
        _ = try await leave(world.grace)
        await #expect(throws: StoreError.conversationNotFound) {
            try await world.store.send("anyone?", from: world.grace.id, to: .conversation(group))
        }
    }

    /// GroupPlan rule 7: an invitation lapses when its inviter may no longer add people, and an
    /// admin withdraws one by removing the invitee.
    @Test(arguments: StoreBackend.all)
    func anInvitationLapsesWithItsInvitersRightAndCanBeWithdrawn(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        _ = try await world.change(group, .setRole(world.grace.id, .admin))
        func act(_ actor: User, _ action: MembershipChange.Action) async throws -> GroupOutcome {
            try await world.store.changeGroup(
                MembershipChange(actor: actor.id, clientId: .random(), conversation: group, action: action, maxMembers: 256), now: .now())
        }
        #expect(try await act(world.grace, .add([world.eve.id], shareHistory: true)).invited == [world.eve.id])
        #expect(try await world.store.invitations(of: world.eve.id).map(\.conversationId) == [group])
        _ = try await world.change(group, .setRole(world.grace.id, .member))
        #expect(try await world.store.invitations(of: world.eve.id).isEmpty, "her inviter is no admin now: it lapsed")
        await #expect(throws: StoreError.invitationNotFound) { try await act(world.eve, .accept) }
        // The owner's own invitation stays through others' changes, and is withdrawn by removing her.
        _ = try await world.change(group, .add([world.eve.id], shareHistory: false))
        _ = try await act(world.alan, .leave)
        #expect(try await world.store.invitations(of: world.eve.id).count == 1)
        let withdrawn = try await world.change(group, .remove(world.eve.id))
        #expect(withdrawn.entry == nil)
        #expect(try await world.store.invitations(of: world.eve.id).isEmpty)
        await #expect(throws: StoreError.memberNotFound) { try await world.change(group, .remove(world.eve.id)) }
        // An admin who leaves takes their pending invitations with them.
        _ = try await world.change(group, .setRole(world.grace.id, .admin))
        _ = try await act(world.grace, .add([world.eve.id], shareHistory: false))
        _ = try await act(world.grace, .leave)
        #expect(try await world.store.invitations(of: world.eve.id).isEmpty)
    }

    @Test(arguments: StoreBackend.all)
    func invitationsAreAcceptedOrDeclined(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id])
        let invited = try await world.change(group, .add([world.eve.id], shareHistory: true))
        #expect(invited.entry == nil && invited.invited == [world.eve.id])
        let accepted = try await world.store.changeGroup(
            MembershipChange(actor: world.eve.id, clientId: .random(), conversation: group, action: .accept, maxMembers: 256), now: .now())
        #expect(accepted.entry?.entry?.type == .joined && accepted.entry?.senderId == world.eve.id)
        let seen = try await world.store.messages(in: group, as: world.eve.id, query: HistoryQuery(limit: 50)).messages
        #expect(seen.first?.seq == 1, "the inviter shared history")
        #expect(try await world.store.invitations(of: world.eve.id).isEmpty)
        // Declined: gone, and accepting it afterwards finds nothing.
        let other = try await world.group(with: [world.grace.id])
        _ = try await world.change(other, .add([world.eve.id], shareHistory: false))
        try await world.store.declineInvitation(to: other, user: world.eve.id)
        await #expect(throws: StoreError.invitationNotFound) { try await world.store.declineInvitation(to: other, user: world.eve.id) }
        await #expect(throws: StoreError.invitationNotFound) {
            try await world.store.changeGroup(
                MembershipChange(actor: world.eve.id, clientId: .random(), conversation: other, action: .accept, maxMembers: 256), now: .now())
        }
    }

    /// `shareHistory` on a create is the invitations' as on an add: a stranger invited then sees the
    /// group from its first entry once they accept, and without it only from their joining.
    @Test(arguments: StoreBackend.all)
    func invitationsMadeAtCreationShareHistoryWhenAsked(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        for share in [true, false] {
            let created = try await world.store.createGroup(
                NewGroup(
                    creator: world.ada.id, clientId: .random(), title: "T", memberIds: [world.grace.id, world.eve.id], maxMembers: 256,
                    shareHistory: share), now: .now())
            #expect(created.invited == [world.eve.id], "eve is no contact of ada's")
            let group = created.conversationId
            _ = try await world.store.send("before eve", from: world.ada.id, to: .conversation(group))
            _ = try await world.store.changeGroup(
                MembershipChange(actor: world.eve.id, clientId: .random(), conversation: group, action: .accept, maxMembers: 256), now: .now())
            let seen = try await world.store.messages(in: group, as: world.eve.id, query: HistoryQuery(limit: 50)).messages
            #expect(seen.contains { $0.text == "before eve" } == share, "shareHistory: \(share)")
            #expect((seen.first?.seq == 1) == share)
        }
    }

    @Test(arguments: StoreBackend.all)
    func aRetriedActionAnswersTheOriginalAndChangesNothing(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        let change = MembershipChange(actor: world.ada.id, clientId: .random(), conversation: group, action: .remove(world.alan.id), maxMembers: 256)
        let first = try await world.store.changeGroup(change, now: .now())
        let second = try await world.store.changeGroup(change, now: .now())
        #expect(!first.duplicate && second.duplicate && first.entry?.id == second.entry?.id && second.deliveries.isEmpty)
        #expect(try await world.store.conversation(group, as: world.ada.id).lastSeq == first.entry?.seq)
        // The client id of a message cannot be reused for an action.
        let sent = try await world.store.send("hi", from: world.ada.id, to: .conversation(group))
        await #expect(throws: StoreError.clientIdConflict) {
            try await world.store.changeGroup(
                MembershipChange(actor: world.ada.id, clientId: sent.message.clientId, conversation: group, action: .rename("x"), maxMembers: 256),
                now: .now())
        }
    }

    @Test(arguments: StoreBackend.all)
    func unreadCountsSkipEntriesAndOwnMessagesAndMentionsAreCounted(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        _ = try await world.change(group, .rename("New name"))
        let mention = try await world.store.send(
            NewMessage(
                sender: world.ada.id, clientId: .random(), target: .conversation(group), text: "hi @grace and @ADA and @eve, @nobody.",
                mentionNames: Validation.mentionedUsernames(in: "hi @grace and @ADA and @eve, @nobody.")), now: .now())
        #expect(mention.message.mentions == [world.grace.id], "members only, never the sender")
        _ = try await world.store.send("plain", from: world.alan.id, to: .conversation(group))
        let grace = try await world.store.conversation(group, as: world.grace.id)
        #expect(grace.unreadCount == 2 && grace.mentionCount == 1)
        let history = try await world.store.messages(in: group, as: world.grace.id, query: HistoryQuery(limit: 50)).messages
        #expect(history.first { $0.seq == mention.message.seq }?.mentions == [world.grace.id])
        _ = try await world.store.updateReceipt(in: group, member: world.grace.id, deliveredSeq: nil, readSeq: grace.lastSeq, now: .now())
        let read = try await world.store.conversation(group, as: world.grace.id)
        #expect(read.unreadCount == 0 && read.mentionCount == 0)
    }

    @Test(arguments: StoreBackend.all)
    func aReceiptWritesConstantlyManyEventsAndTheAggregateReachesTheSender(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        let sent = try await world.store.send("read me", from: world.ada.id, to: .conversation(group))
        let seq = sent.message.seq
        let graceRead = try await world.store.updateReceipt(in: group, member: world.grace.id, deliveredSeq: nil, readSeq: seq, now: .now())
        #expect(graceRead.deliveries.map(\.recipient) == [world.grace.id], "Alan has not read: only Grace's devices hear")
        var info = try await world.store.messageInfo(in: group, seq: seq, as: world.ada.id)
        #expect(info.readBy == [world.grace.id] && info.pending == [world.alan.id] && info.deliveredTo.isEmpty)
        let alanRead = try await world.store.updateReceipt(in: group, member: world.alan.id, deliveredSeq: seq, readSeq: nil, now: .now())
        let summaries = alanRead.deliveries.compactMap { delivery -> (UserID, ReceiptSummary)? in
            if case .receiptSummary(let summary) = delivery.event.payload { (delivery.recipient, summary) } else { nil }
        }
        #expect(summaries.map(\.0) == [world.ada.id], "only the sender hears of the aggregate")
        #expect(summaries.first?.1.everyoneDeliveredSeq == seq && (summaries.first?.1.everyoneReadSeq ?? 0) < seq)
        info = try await world.store.messageInfo(in: group, seq: seq, as: world.ada.id)
        #expect(info.deliveredTo == [world.alan.id] && info.readBy == [world.grace.id])
        await #expect(throws: StoreError.forbidden("Message info is shown for your own messages only.")) {
            try await world.store.messageInfo(in: group, seq: seq, as: world.grace.id)
        }
        let summary = try await world.store.conversation(group, as: world.ada.id)
        #expect(summary.everyoneDeliveredSeq == seq)
        // The replayed stream carries the same summary.
        let expected = try #require(summaries.first?.1)
        #expect(try await world.store.allEvents(of: world.ada.id).contains { $0.payload == .receiptSummary(expected) })
    }

    @Test(arguments: StoreBackend.all)
    func presenceStaysBetweenDirectContacts(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id])
        _ = try await world.change(group, .add([world.eve.id], shareHistory: false))
        _ = try await world.store.changeGroup(
            MembershipChange(actor: world.eve.id, clientId: .random(), conversation: group, action: .accept, maxMembers: 256), now: .now())
        _ = try await world.store.send("hi all", from: world.eve.id, to: .conversation(group))
        _ = try await world.store.send("hi eve", from: world.grace.id, to: .conversation(group))
        #expect(!(try await world.store.contacts(of: world.eve.id)).contains(world.grace.id))
        #expect(try await world.store.contacts(of: world.grace.id).contains(world.ada.id))
        #expect(try await world.store.conversation(group, as: world.eve.id).members.allSatisfy { $0.lastSeenAt == nil || $0.userId == world.eve.id })
    }
}

/// Four people: Ada has written with Grace and Alan (contacts), never with Eve.
struct GroupWorld {
    let store: any ParleyStore
    let ada: User, grace: User, alan: User, eve: User

    init(_ backend: StoreBackend) async throws {
        store = try await backend.make()
        ada = try await store.makeUser("ada")
        grace = try await store.makeUser("grace")
        alan = try await store.makeUser("alan")
        eve = try await store.makeUser("eve")
        for friend in [grace, alan] {
            _ = try await store.send("hi", from: ada.id, to: .user(friend.id))
            _ = try await store.send("hi!", from: friend.id, to: .user(ada.id))
        }
    }

    func group(with members: [UserID]) async throws -> ConversationID {
        try await store.createGroup(NewGroup(creator: ada.id, clientId: .random(), title: "Group", memberIds: members, maxMembers: 256), now: .now())
            .conversationId
    }

    /// An action by Ada, the owner.
    func change(_ group: ConversationID, _ action: MembershipChange.Action) async throws -> GroupOutcome {
        try await store.changeGroup(MembershipChange(actor: ada.id, clientId: .random(), conversation: group, action: action, maxMembers: 256), now: .now())
    }
}

/// The rules the review of the first version found broken.
@Suite struct GroupIdempotencyConformanceTests {
    @Test(arguments: StoreBackend.all)
    func aRetriedInviteOnlyAddAnswersTheOriginalEvenAfterADecline(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id])
        let add = MembershipChange(
            actor: world.ada.id, clientId: .random(), conversation: group, action: .add([world.eve.id], shareHistory: false), maxMembers: 256)
        let first = try await world.store.changeGroup(add, now: .now())
        #expect(first.entry == nil && first.invited == [world.eve.id] && !first.duplicate)
        try await world.store.declineInvitation(to: group, user: world.eve.id)
        let retry = try await world.store.changeGroup(add, now: .now())
        #expect(retry.duplicate && retry.invited == [world.eve.id] && retry.deliveries.isEmpty, "no second invitation after a decline")
        #expect(try await world.store.invitations(of: world.eve.id).isEmpty)
        // Its client id is taken: not for another action, nor for a message in the group.
        await #expect(throws: StoreError.clientIdConflict) {
            try await world.store.changeGroup(
                MembershipChange(actor: world.ada.id, clientId: add.clientId, conversation: group, action: .rename("x"), maxMembers: 256), now: .now())
        }
    }

    /// GroupPlan rule 6: no line says the group was renamed to its own name, or someone made what they are.
    @Test(arguments: StoreBackend.all)
    func aChangeToWhatIsAlreadySoWritesNothing(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id])
        #expect(try await world.change(group, .setRole(world.grace.id, .admin)).entry?.entry?.type == .role)
        let lastSeq = try await world.store.conversation(group, as: world.ada.id).lastSeq
        for action in [MembershipChange.Action.rename("Group"), .setRole(world.grace.id, .admin)] {
            let outcome = try await world.change(group, action)
            #expect(outcome.entry == nil && outcome.deliveries.isEmpty, "\(action)")
        }
        #expect(try await world.store.conversation(group, as: world.ada.id).lastSeq == lastSeq)
        #expect(try await world.change(group, .setRole(world.grace.id, .member)).entry?.entry?.role == .member)
    }

    /// GroupRetry rules 2 and 3: a retry answers the original; the id reused for another kind of
    /// action, or for the same kind about someone else, is a conflict and changes nothing.
    @Test(arguments: StoreBackend.all)
    func anActionsClientIdReusedForAnotherActionIsAConflict(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        func act(_ action: MembershipChange.Action, _ clientId: ClientMessageID) async throws -> GroupOutcome {
            try await world.store.changeGroup(
                MembershipChange(actor: world.ada.id, clientId: clientId, conversation: group, action: action, maxMembers: 256), now: .now())
        }
        let renamed = ClientMessageID.random(), promoted = ClientMessageID.random(), removed = ClientMessageID.random()
        _ = try await act(.rename("Renamed"), renamed)
        _ = try await act(.setRole(world.grace.id, .admin), promoted)
        let lastSeq = try await world.store.conversation(group, as: world.ada.id).lastSeq
        let others: [(MembershipChange.Action, ClientMessageID)] = [
            (.leave, renamed), (.remove(world.grace.id), renamed), (.setRole(world.alan.id, .admin), renamed), (.accept, renamed),
            (.setRole(world.grace.id, .member), promoted), (.setRole(world.alan.id, .admin), promoted), (.rename("Other"), promoted),
        ]
        for (action, clientId) in others {
            await #expect(throws: StoreError.clientIdConflict, "\(action)") { _ = try await act(action, clientId) }
        }
        let after = try await world.store.conversation(group, as: world.ada.id)
        #expect(after.lastSeq == lastSeq && after.title == "Renamed")
        #expect(after.members.map(\.userId).contains(world.ada.id))
        // The same action again is a retry.
        #expect(try await act(.rename("Renamed"), renamed).duplicate)
        #expect(try await act(.setRole(world.grace.id, .admin), promoted).duplicate)
        let removal = try await act(.remove(world.alan.id), removed)
        #expect(!removal.duplicate && removal.entry?.entry?.type == .removed)
        #expect(try await act(.remove(world.alan.id), removed).duplicate)
        await #expect(throws: StoreError.clientIdConflict) { _ = try await act(.remove(world.grace.id), removed) }
        #expect(try await world.store.conversation(group, as: world.ada.id).members.map(\.userId).contains(world.grace.id))
    }

    @Test(arguments: StoreBackend.all)
    func aMessageCannotReuseAnActionsClientId(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id])
        let rename = try await world.change(group, .rename("Renamed"))
        let clientId = try #require(rename.entry?.clientId)
        await #expect(throws: StoreError.clientIdConflict) {
            try await world.store.send("hello", from: world.ada.id, to: .conversation(group), clientId: clientId)
        }
    }

    @Test(arguments: StoreBackend.all)
    func invitationsCountAgainstTheGroupsSize(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id])
        let stranger = try await world.store.makeUser("stranger")
        await #expect(throws: StoreError.groupFull(limit: 3)) {
            try await world.store.changeGroup(
                MembershipChange(
                    actor: world.ada.id, clientId: .random(), conversation: group, action: .add([world.eve.id, stranger.id], shareHistory: false),
                    maxMembers: 3), now: .now())
        }
        _ = try await world.store.changeGroup(
            MembershipChange(actor: world.ada.id, clientId: .random(), conversation: group, action: .add([world.eve.id], shareHistory: false), maxMembers: 3),
            now: .now())
        await #expect(throws: StoreError.groupFull(limit: 3), "a pending invitation holds its place") {
            try await world.store.changeGroup(
                MembershipChange(
                    actor: world.ada.id, clientId: .random(), conversation: group, action: .add([stranger.id], shareHistory: false), maxMembers: 3),
                now: .now())
        }
    }

    @Test(arguments: StoreBackend.all)
    func someoneOutOfTheGroupDoesNotLearnItsNewTitleNorProbeSeqs(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        _ = try await world.change(group, .add([world.eve.id], shareHistory: false))
        try await world.store.declineInvitation(to: group, user: world.eve.id)
        let early = try await world.store.send("before alan's removal", from: world.grace.id, to: .conversation(group))
        _ = try await world.change(group, .remove(world.alan.id))
        _ = try await world.change(group, .rename("Secret plans"))
        for outsider in [world.alan.id, world.eve.id] {
            let titles = try await world.store.allEvents(of: outsider).compactMap { event -> String? in
                switch event.payload {
                case .conversation(let info) where info.id == group: info.title ?? ""
                case .invitation(let invitation) where invitation.conversationId == group: invitation.title
                default: nil
                }
            }
            #expect(!titles.isEmpty && !titles.contains("Secret plans"), "\(titles)")
        }
        // A newcomer without the history cannot tell an earlier message from an entry by asking.
        let late = try await world.store.createUser(NewUser(username: "late", displayName: "Late", passwordHash: "h"), now: .now())
        _ = try await world.store.send("hi", from: world.ada.id, to: .user(late.id))
        _ = try await world.store.send("hi!", from: late.id, to: .user(world.ada.id))
        _ = try await world.change(group, .add([late.id], shareHistory: false))
        await #expect(throws: StoreError.messageNotFound) {
            try await world.store.messageInfo(in: group, seq: early.message.seq, as: late.id)
        }
    }
}
