import ParleyCore
import ParleyStore
import Testing

/// What someone who left a group keeps is cut by commit order, not by the clocks that stamped the
/// changes (the rules of SQLite's `CommitOrderMarks`), on every backend.
@Suite struct FormerMemberCutConformanceTests {
    /// Rule 1: the clocks say the opposite of the order in which things happened (as a node's clock
    /// behind another's, or `now` taken before a wait, can); what she keeps follows the order.
    @Test(arguments: StoreBackend.all)
    func theCutFollowsTheOrderOfTheChangesNotTheirTimes(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        let start = Timestamp.now().milliseconds
        let at = { (offset: Int64) in Timestamp(milliseconds: start + offset) }
        let message = try await world.store.send("draft", from: world.ada.id, to: .conversation(group), at: at(0)).message
        let before = try await world.act(world.ada, message.seq, .edit("seen by grace"), in: group, at: at(50))
        #expect(before.deliveries.contains { $0.recipient == world.grace.id }, "a member when it was made")
        _ = try await world.act(world.alan, message.seq, .react("👍"), in: group, at: at(60))
        try await remove(world.grace, from: group, world, at: at(40))
        let after = try await world.act(world.ada, message.seq, .edit("after grace left"), in: group, at: at(10))
        #expect(!after.deliveries.contains { $0.recipient == world.grace.id })
        _ = try await world.act(world.alan, message.seq, .react("🎉"), in: group, at: at(20))
        _ = try await world.act(world.ada, message.seq, .react("❤️"), in: group, at: at(30))

        let copy = try await historyCopy(of: message.seq, in: group, for: world.grace, world)
        #expect(copy.text == "seen by grace", "the text she was sent, not the one after: \(copy.text)")
        #expect(copy.reactions?.map(\.emoji) == ["👍"], "\(copy.reactions ?? [])")
        #expect(try await world.store.versions(in: group, seq: message.seq, as: world.grace.id).map(\.text) == ["draft"])
        #expect(try await world.store.search(try SearchQuery.parse("grace"), as: world.grace.id, limit: 10, offset: 0).isEmpty)
        let members = try await historyCopy(of: message.seq, in: group, for: world.alan, world)
        #expect(members.text == "after grace left" && Set(members.reactions?.map(\.emoji) ?? []) == ["🎉", "❤️"])
    }

    /// Rule 3: a reaction she saw stays as she saw it when its author changes or clears it after she
    /// left; whoever leaves later sees it as it was then; a delete for everyone takes it all.
    @Test(arguments: StoreBackend.all)
    func aReactionChangedOrClearedAfterSheLeftStaysAsSheSawIt(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        let message = try await world.store.send("lunch?", from: world.ada.id, to: .conversation(group)).message
        let other = try await world.store.send("or dinner", from: world.ada.id, to: .conversation(group)).message
        _ = try await world.act(world.ada, message.seq, .react("👍"), in: group)
        _ = try await world.act(world.alan, message.seq, .react("❤️"), in: group)
        _ = try await world.act(world.alan, other.seq, .react("😂"), in: group)
        try await remove(world.grace, from: group, world)
        _ = try await world.act(world.ada, message.seq, .react("🎉"), in: group)
        _ = try await world.act(world.alan, message.seq, .react(nil), in: group)
        _ = try await world.act(world.alan, other.seq, .react(nil), in: group)

        let graces = try await historyCopy(of: message.seq, in: group, for: world.grace, world)
        #expect(graces.reactions?.map(\.emoji) == ["👍", "❤️"], "\(graces.reactions ?? [])")
        #expect(try await historyCopy(of: other.seq, in: group, for: world.grace, world).reactions?.map(\.emoji) == ["😂"])
        let alans = try await historyCopy(of: message.seq, in: group, for: world.alan, world)
        #expect(alans.reactions == [Reaction(emoji: "🎉", count: 1, mine: false, userIds: [world.ada.id])])
        #expect(try await historyCopy(of: other.seq, in: group, for: world.alan, world).reactions == nil, "none left, not an empty list")

        // Alan leaves after the changes: he keeps them as they were when he left.
        _ = try await world.act(world.ada, message.seq, .react(nil), in: group)
        #expect(try await historyCopy(of: message.seq, in: group, for: world.grace, world).reactions?.map(\.emoji) == ["👍", "❤️"])
        try await remove(world.alan, from: group, world)
        #expect(try await historyCopy(of: message.seq, in: group, for: world.alan, world).reactions == nil)
        _ = try await world.act(world.ada, other.seq, .react("👀"), in: group)
        #expect(try await historyCopy(of: other.seq, in: group, for: world.alan, world).reactions == nil)
        #expect(try await historyCopy(of: other.seq, in: group, for: world.grace, world).reactions?.map(\.emoji) == ["😂"])

        _ = try await world.act(world.ada, message.seq, .delete, in: group)
        let deleted = try await historyCopy(of: message.seq, in: group, for: world.grace, world)
        #expect(deleted.isDeleted && deleted.reactions == nil)
    }

    /// Rule 1 under a real race: an edit and her removal made at once, many times. Whatever order
    /// they commit in, her history shows the edit exactly when her stream carried it.
    @Test(arguments: StoreBackend.all)
    func anEditRacingHerRemovalIsInHerHistoryExactlyWhenItReachedHer(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let group = try await world.group(with: [world.grace.id, world.alan.id])
        var reached = 0
        for round in 0..<12 {
            let message = try await world.store.send("round \(round)", from: world.ada.id, to: .conversation(group)).message
            let head = try await world.store.allEvents(of: world.grace.id).last?.position ?? 0
            // Her removal's clock runs behind the edit's, so a time cut would get every edit that
            // committed first wrong.
            let now = Timestamp.now().milliseconds
            async let edit = world.act(world.ada, message.seq, .edit("round \(round) edited"), in: group, at: Timestamp(milliseconds: now + 5))
            async let removal: Void = remove(world.grace, from: group, world, at: Timestamp(milliseconds: now))
            _ = try await (edit, removal)
            let live = try await world.store.allEvents(of: world.grace.id, after: head).contains { event in
                if case .messageUpdated(let updated) = event.payload { updated.seq == message.seq } else { false }
            }
            reached += live ? 1 : 0
            let copy = try await historyCopy(of: message.seq, in: group, for: world.grace, world)
            #expect(copy.text == (live ? "round \(round) edited" : "round \(round)"), "round \(round): reached her live: \(live)")
            let versions = try await world.store.versions(in: group, seq: message.seq, as: world.grace.id)
            #expect(versions.map(\.text) == (live ? ["round \(round)"] : []), "round \(round)")
            _ = try await world.store.changeGroup(
                MembershipChange(
                    actor: world.ada.id, clientId: .random(), conversation: group, action: .add([world.grace.id], shareHistory: true),
                    maxMembers: 256), now: .now())
        }
        // Not asserted: how often each order won (it is the scheduler's); recorded for the reader.
        print("FormerMemberCut: the edit reached her first in \(reached) of 12 rounds")
    }

    private func remove(_ user: User, from group: ConversationID, _ world: ActionWorld, at now: Timestamp = .now()) async throws {
        _ = try await world.store.changeGroup(
            MembershipChange(actor: world.ada.id, clientId: .random(), conversation: group, action: .remove(user.id), maxMembers: 256), now: now)
    }

    private func historyCopy(of seq: Int64, in group: ConversationID, for user: User, _ world: ActionWorld) async throws -> Message {
        let page = try await world.store.messages(in: group, as: user.id, query: HistoryQuery(limit: 50)).messages
        return try #require(page.first { $0.seq == seq })
    }
}
