import ParleyCore
import ParleyStore
import Testing

/// Newest-first pages after a hit (``SearchPosition``) on every backend: messages deleted or sent
/// between pages neither skip a result nor repeat one, as an offset would.
@Suite struct SearchPagingConformanceTests {
    /// Reports 0–5, alternating between Ada's chat with Grace (even) and with Alan (odd); 2 and 3
    /// at the same millisecond, 0 and 1 too.
    static func sixReports(_ world: ActionWorld) async throws -> (base: Int64, sent: [String: Message]) {
        let base = Timestamp.now().milliseconds
        var sent: [String: Message] = [:]
        for index in 0..<6 {
            let chat = index % 2 == 0 ? world.direct : .direct(world.ada.id, world.alan.id)
            let at = Timestamp(milliseconds: base + Int64(index / 2) * 1000 + (index >= 4 ? Int64(index) : 0))
            sent["report \(index)"] = try await world.store.send("report \(index)", from: world.ada.id, to: .conversation(chat), at: at).message
        }
        return (base, sent)
    }

    static func page(_ world: ActionWorld, as user: User, after position: SearchPosition?, limit: Int) async throws -> [SearchHit] {
        var query = try SearchQuery.parse("report")
        query.olderThan = position
        return try await world.store.search(query, as: user.id, limit: limit, offset: 0)
    }

    @Test(arguments: StoreBackend.all)
    func everyHitOnceAcrossPagesAndTies(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        _ = try await Self.sixReports(world)
        for limit in [1, 2, 4] {
            var seen: [String] = []
            var position: SearchPosition?
            for _ in 0..<10 {
                let page = try await Self.page(world, as: world.ada, after: position, limit: limit)
                guard let last = page.last else { break }
                seen += page.map(\.text)
                position = SearchPosition(last)
            }
            #expect(seen.count == 6 && Set(seen).count == 6, "limit \(limit): \(seen)")
            #expect(Array(seen.prefix(2)) == ["report 5", "report 4"], "newest first")
        }
    }

    @Test(arguments: StoreBackend.all)
    func aDeletionOrASendBetweenPagesSkipsAndRepeatsNothing(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let (base, sent) = try await Self.sixReports(world)
        let first = try await Self.page(world, as: world.ada, after: nil, limit: 2)
        #expect(first.map(\.text) == ["report 5", "report 4"])
        // Between the pages: a result already shown is deleted (an offset would skip one) and a
        // newer one is sent (an offset would show one again).
        _ = try await world.act(world.ada, sent["report 4"]!.seq, .delete)
        _ = try await world.store.send("report 6", from: world.ada.id, to: .conversation(world.direct), at: Timestamp(milliseconds: base + 4000))
        let second = try await Self.page(world, as: world.ada, after: SearchPosition(first[1]), limit: 2)
        #expect(Set(second.map(\.text)) == ["report 3", "report 2"])
        let third = try await Self.page(world, as: world.ada, after: SearchPosition(second[1]), limit: 2)
        #expect(Set(third.map(\.text)) == ["report 1", "report 0"])
        #expect(try await Self.page(world, as: world.ada, after: SearchPosition(third[1]), limit: 2).isEmpty)
    }

    /// A position naming a message of someone else's conversation tells nothing of it: it pages by
    /// its time alone, as one naming no message at all does.
    @Test(arguments: StoreBackend.all)
    func aPositionInAnotherConversationPagesByTimeOnly(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let (base, sent) = try await Self.sixReports(world)
        let alans = try #require(sent["report 1"])
        let forged = SearchPosition(
            SearchHit(
                conversationId: alans.conversationId, seq: alans.seq, senderId: world.ada.id, createdAt: Timestamp(milliseconds: base + 1500),
                text: "", matches: []))
        // Grace reads only her chat with Ada: reports 0, 2 and 4. Older than base + 1.5 s: 0 and 2
        // (storage order before report 1 would give report 0 alone).
        #expect(Set(try await Self.page(world, as: world.grace, after: forged, limit: 10).map(\.text)) == ["report 0", "report 2"])
        #expect(SearchPosition(cursor: forged.cursor) == forged)
    }

    /// A former member's forged cursor naming a message sent after they left pages as one naming
    /// no message: it does not tell them the message exists, nor when it was stored.
    @Test(arguments: StoreBackend.all)
    func aPositionAtAMessageAFormerMemberNeverSawTellsNothing(backend: StoreBackend) async throws {
        let world = try await ActionWorld(backend)
        let base = Timestamp.now().milliseconds
        let group = try await world.group(with: [world.grace.id])
        let at = { (offset: Int64) in Timestamp(milliseconds: base + offset) }
        _ = try await world.store.send("report in the group", from: world.grace.id, to: .conversation(group), at: at(0))
        _ = try await world.store.changeGroup(
            MembershipChange(actor: world.ada.id, clientId: .random(), conversation: group, action: .remove(world.grace.id), maxMembers: 256),
            now: .now())
        let unseen = try await world.store.send("report after grace left", from: world.ada.id, to: .conversation(group), at: at(2000)).message
        _ = try await world.store.send("report in the chat", from: world.ada.id, to: .conversation(world.direct), at: at(2500))
        func page(seq: Int64) async throws -> [String] {
            let position = SearchPosition(
                SearchHit(
                    conversationId: group, seq: seq, senderId: world.ada.id, createdAt: Timestamp(milliseconds: base + 3000), text: "",
                    matches: []))
            return try await Self.page(world, as: world.grace, after: position, limit: 10).map(\.text)
        }
        #expect(try await page(seq: 999) == ["report in the chat", "report in the group"])
        #expect(try await page(seq: unseen.seq) == ["report in the chat", "report in the group"])
    }
}
