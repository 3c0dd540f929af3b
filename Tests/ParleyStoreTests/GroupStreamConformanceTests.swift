import ParleyCore
import ParleyStore
import Testing

/// Streams with groups in them: positions go up in every user's stream but may skip (a group
/// message takes one position for all its members on SQLite), so every delivery names the position
/// before it, and the replay is the one truth a live connection falls back on.
@Suite struct GroupStreamConformanceTests {
    /// Rules: each user's replay ascends and is the same read in any page size or from any point;
    /// every delivery sits in its recipient's replay at its position, right after `previous`; the
    /// head is the last position; a member out of the group gets nothing of it in the stream.
    @Test(arguments: StoreBackend.all)
    func everyDeliveryFollowsThePreviousEventOfItsRecipientsReplay(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let store = world.store
        var deliveries: [Delivery] = []
        // Grace's head runs ahead of the others', so a group message has to skip positions for them.
        for i in 0..<5 { deliveries += try await store.send("grace \(i)", from: world.ada.id, to: .user(world.grace.id)).deliveries }
        let created = try await store.createGroup(
            NewGroup(creator: world.ada.id, clientId: .random(), title: "Three", memberIds: [world.grace.id, world.alan.id], maxMembers: 256),
            now: .now())
        let group = created.conversationId
        deliveries += created.deliveries
        var sent: [SendOutcome] = []
        for (i, sender) in [world.ada, world.grace, world.alan, world.grace].enumerated() {
            sent.append(try await store.send("to all \(i)", from: sender.id, to: .conversation(group)))
        }
        deliveries += sent.flatMap(\.deliveries)
        deliveries += try await store.updateReceipt(in: group, member: world.alan.id, deliveredSeq: sent[3].message.seq, readSeq: 2, now: .now()).deliveries
        deliveries += try await store.act(
            NewMessageAction(actor: world.ada.id, clientId: .random(), conversation: group, seq: sent[0].message.seq, change: .edit("edited")),
            now: .now()
        ).deliveries
        let removed = try await world.change(group, .remove(world.alan.id))
        deliveries += removed.deliveries
        let whileOut = try await store.send("alan is out", from: world.grace.id, to: .conversation(group))
        deliveries += whileOut.deliveries
        deliveries += try await store.send("alan alone", from: world.ada.id, to: .user(world.alan.id)).deliveries
        let back = try await world.change(group, .add([world.alan.id], shareHistory: false))
        deliveries += back.deliveries
        let afterBack = try await store.send("welcome back", from: world.alan.id, to: .conversation(group))
        deliveries += afterBack.deliveries

        #expect(!whileOut.deliveries.contains { $0.recipient == world.alan.id }, "a removed member is not sent the group's messages")
        for user in [world.ada, world.grace, world.alan] {
            let replay = try await store.allEvents(of: user.id)
            let positions = replay.map(\.position)
            #expect(zip(positions, positions.dropFirst()).allSatisfy { $0 < $1 }, "\(user.username)'s positions ascend: \(positions)")
            #expect(try await store.streamHead(of: user.id) == positions.last)
            // Paged two at a time (the two sides of a replay merge at every page), from any point.
            var paged: [StreamEvent] = []
            while case .events(let page, _) = try await store.events(of: user.id, after: paged.last?.position ?? 0, limit: 2), !page.isEmpty {
                paged += page
            }
            #expect(paged == replay)
            for (index, position) in positions.enumerated() {
                #expect(try await store.allEvents(of: user.id, after: position) == Array(replay[(index + 1)...]))
            }
            for delivery in deliveries where delivery.recipient == user.id {
                guard let index = positions.firstIndex(of: delivery.event.position) else {
                    Issue.record("\(user.username): delivery at \(delivery.event.position) is not in the replay \(positions)")
                    continue
                }
                #expect(delivery.previous == (index == 0 ? 0 : positions[index - 1]), "\(user.username) at \(delivery.event.position)")
                #expect(Self.kind(delivery.event.payload) == Self.kind(replay[index].payload))
            }
            let texts = replay.compactMap { event -> String? in
                if case .message(let message) = event.payload, message.conversationId == group, message.entry == nil { message.text } else { nil }
            }
            if user.id == world.alan.id {
                #expect(texts == ["edited", "to all 1", "to all 2", "to all 3", "welcome back"], "the replay shows messages as they are now")
            } else {
                #expect(texts == ["edited", "to all 1", "to all 2", "to all 3", "alan is out", "welcome back"])
            }
        }
    }

    /// Pruning keeps each user's newest events, however far their positions skipped: a quiet member
    /// lifted past a busy one's head by a group message can still resume from before it.
    @Test(arguments: StoreBackend.all)
    func pruningCountsEventsNotPositions(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let store = world.store
        for index in 0..<30 { _ = try await store.send("grace \(index)", from: world.ada.id, to: .user(world.grace.id)) }
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        let before = try await store.streamHead(of: world.alan.id)
        let sent = try await store.send("to all", from: world.grace.id, to: .conversation(group))
        _ = try await store.pruneEvents(keepPerUser: 3)
        let after = try await store.allEvents(of: world.alan.id, after: before)
        let head = try await store.streamHead(of: world.alan.id)
        #expect(after.map(\.position) == [head], "not too old: the prune kept Alan's newest events")
        guard case .message(let message) = after.first?.payload else {
            Issue.record("Alan's stream after \(before): \(after)")
            return
        }
        #expect(message.id == sent.message.id)
    }

    /// A group whose members all changed: its next message still comes after everything it had, so
    /// the newcomer's replay, which starts past the group's newest message when they joined, has it.
    @Test(arguments: StoreBackend.all)
    func aGroupWhoseEarlierMembersAllLeftStillReachesItsNewcomer(backend: StoreBackend) async throws {
        let world = try await GroupWorld(backend)
        let store = world.store
        for index in 0..<30 { _ = try await store.send("grace \(index)", from: world.ada.id, to: .user(world.grace.id)) }
        let group = try await world.group(with: [world.grace.id])
        _ = try await store.send("before alan", from: world.grace.id, to: .conversation(group))
        _ = try await world.change(group, .add([world.alan.id], shareHistory: false))
        for leaver in [world.grace, world.ada] {
            _ = try await store.changeGroup(
                MembershipChange(actor: leaver.id, clientId: .random(), conversation: group, action: .leave, maxMembers: 256), now: .now())
        }
        let head = try await store.streamHead(of: world.alan.id)
        let alone = try await store.send("alone now", from: world.alan.id, to: .conversation(group))
        let delivery = try #require(alone.deliveries.first { $0.recipient == world.alan.id })
        #expect(delivery.previous == head)
        let texts = try await store.allEvents(of: world.alan.id, after: head).compactMap { event -> String? in
            if case .message(let message) = event.payload { message.text } else { nil }
        }
        #expect(texts == ["alone now"])
    }

    private static func kind(_ payload: StreamEvent.Payload) -> String {
        switch payload {
        case .message(let message): "message \(message.conversationId) \(message.seq)"
        case .messageUpdated(let message): "updated \(message.conversationId) \(message.seq)"
        case .messageHidden(let ref): "hidden \(ref.seq)"
        case .receipt(let receipt): "receipt \(receipt.userId)"
        case .receiptSummary(let summary): "summary \(summary.conversationId)"
        case .conversation(let info): "conversation \(info.id)"
        case .invitation(let invitation): "invitation \(invitation.conversationId)"
        }
    }
}
