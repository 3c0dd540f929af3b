import Foundation
import ParleyCore
import ParleySDK
import ParleyViewModels
import Testing

/// Search through the real SDK against a real server (or two nodes) on loopback: any script, only
/// what the user may read, over REST while the live connection is down.
@MainActor
@Suite(.serialized) struct SearchEndToEndTests {
    /// The matched parts of each hit's text, in order.
    func found(_ page: API.SearchResults) -> [[String]] {
        page.results.map { hit in hit.segments.filter(\.isMatch).map { String($0.text) } }
    }

    func texts(_ page: API.SearchResults) -> [String] { page.results.map(\.text) }

    @Test(arguments: Topology.allCases) func twoUsersFindTheirMessagesInAnyScriptAndARemovedMemberNothingNewer(topology: Topology) async throws {
        let (server, aliceSession, bobSession) = try await ServerHarness.withAliceAndBob(topology)
        let carolSession = try await server.register("carol", "Carol")
        let (aliceId, bobId, carolId) = (aliceSession.user.id, bobSession.user.id, carolSession.user.id)
        let alice = try server.client(aliceSession, directory: temporaryDirectory())
        let bob = try server.client(bobSession, directory: temporaryDirectory())
        let carol = try server.client(carolSession, directory: temporaryDirectory())
        for client in [alice, bob, carol] { client.start() }
        _ = try await eventually("all online") { [alice, bob, carol].allSatisfy { $0.connectionState == .online } ? true : nil }

        let direct = ConversationID.direct(aliceId, bobId)
        try alice.send("Meet me at the Café at noon", in: direct, to: bobId)
        try alice.send("東京で会いましょう", in: direct, to: bobId)
        try alice.send("the config is in db.json", in: direct, to: bobId)
        _ = try await eventually("bob has them") { bob.timeline(direct).count == 3 ? true : nil }
        try bob.send("Ça marche, à midi au café", in: direct)
        _ = try await eventually("acknowledged") { bob.timeline(direct).last?.seq != nil ? true : nil }

        // Found once acknowledged, by both sides, in any script, accents folded.
        let cafe = try await bob.search("cafe")
        #expect(texts(cafe) == ["Ça marche, à midi au café", "Meet me at the Café at noon"], "newest first")
        #expect(found(cafe) == [["café"], ["Café"]])
        #expect(cafe.results.allSatisfy { $0.conversationId == direct })
        #expect(cafe.results.map(\.senderId) == [bobId, aliceId])
        let tokyo = try await alice.search("京")
        #expect(texts(tokyo) == ["東京で会いましょう"] && found(tokyo) == [["京"]])
        #expect(texts(try await alice.search("東京")) == ["東京で会いましょう"])
        #expect(texts(try await bob.search("db.json")) == ["the config is in db.json"])
        #expect(try await carol.search("cafe").results.isEmpty, "not her conversation")
        #expect(try await alice.search("   ").results.isEmpty)
        #expect(try await alice.search("\"unbalanced * NEAR -( ^").results.isEmpty, "FTS syntax is text, never an error")

        // Paged with a cursor.
        let first = try await bob.search("cafe", limit: 1)
        #expect(texts(first) == ["Ça marche, à midi au café"])
        let cursor: String = try #require(first.nextCursor)
        let second = try await bob.search("cafe", cursor: cursor, limit: 1)
        #expect(texts(second) == ["Meet me at the Café at noon"])

        // A group: Carol (a contact of Alice's) finds what she saw, nothing after her removal.
        try alice.send("hi Carol", in: .direct(aliceId, carolId), to: carolId)
        _ = try await eventually("carol has it") { carol.timeline(.direct(aliceId, carolId)).count == 1 ? true : nil }
        try carol.send("hi Alice", in: .direct(aliceId, carolId))
        _ = try await eventually("alice has the answer") { alice.timeline(.direct(aliceId, carolId)).count == 2 ? true : nil }
        let created = try await alice.createGroup(title: "Kyoto trip", members: [bobId, carolId])
        let group = created.conversation.id
        #expect(created.invited.isEmpty)
        _ = try await eventually("carol is in") { carol.conversations[group] }
        try alice.send("kyoto plans before the change", in: group)
        _ = try await eventually("carol has it") { carol.timeline(group).contains { $0.text.hasPrefix("kyoto plans") } ? true : nil }
        try await alice.removeMember(carolId, from: group)
        _ = try await eventually("carol is out") { carol.conversations[group]?.leftSeq != nil ? true : nil }
        try alice.send("kyoto tickets after Carol left", in: group)
        _ = try await eventually("bob has it") { bob.timeline(group).contains { $0.text.hasPrefix("kyoto tickets") } ? true : nil }
        #expect(texts(try await carol.search("kyoto")) == ["kyoto plans before the change"])
        #expect(texts(try await bob.search("kyoto")) == ["kyoto tickets after Carol left", "kyoto plans before the change"])

        // The view model: grouped and named; opening a result marks it. Then REST without the socket.
        let search = SearchViewModel(client: bob)
        search.query = "kyoto"
        await search.submit()
        #expect(search.state == .loaded && search.groups.map(\.title) == ["Kyoto trip"])
        #expect(search.groups.first?.results.map(\.sender) == ["Alice", "Alice"])
        let chat = await search.open(try #require(search.hits.last))
        #expect(chat.highlightedSeq == search.hits.last?.seq && chat.highlightedItemID != nil)
        bob.stop()
        #expect(bob.connectionState != .online)
        #expect(texts(try await bob.search("db.json")) == ["the config is in db.json"], "search needs no live connection")

        for client in [alice, carol] { client.stop() }
        await server.stop()
    }
}
