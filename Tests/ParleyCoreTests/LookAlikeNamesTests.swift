import Foundation
@testable import ParleyCore
import Testing

/// ``LookAlikeNames``' rules: names that read alike have one skeleton, and everyone whose name reads
/// like another's is told apart by username.
@Suite struct LookAlikeNamesTests {
    /// Rule 1: what a hostile pass used to pass for Ada in a group, and a few more.
    @Test(arguments: [
        "Ada Lovelace", "Аda Lovelace", "Ada\u{200B} Lovelace", "ADA LOVELACE", "Ada  Lovelace", "Ａｄａ Ｌｏｖｅｌａｃｅ", "Ada Lovelacé",
        "Ada Iovelace", "Ada 1ovelace", "Αda Lονelace", "𝐀𝐝𝐚 𝐋𝐨𝐯𝐞𝐥𝐚𝐜𝐞", "Ada\u{3164}Lovelace", "Аdа Lоvеlасе",
    ])
    func namesThatReadLikeAdaHaveHerSkeleton(name: String) {
        #expect(LookAlikeNames.skeleton(name) == LookAlikeNames.skeleton("Ada Lovelace"))
    }

    /// Case never counts: I is l's twin and i's capital, so all three are one; Σ's small letter is σ.
    @Test(arguments: [("ALICE", "Alice"), ("WILL", "will"), ("Ivan", "ivan"), ("ΣΟΣ", "σοσ"), ("ǅ", "dz")])
    func caseNeverCounts(upper: String, lower: String) {
        #expect(LookAlikeNames.skeleton(upper) == LookAlikeNames.skeleton(lower))
    }

    @Test func lettersPairedLikeOneReadAsIt() {
        #expect(LookAlikeNames.skeleton("Mom") == LookAlikeNames.skeleton("Rnorn"))
        #expect(LookAlikeNames.skeleton("Will") == LookAlikeNames.skeleton("Vvill"))
        #expect(LookAlikeNames.skeleton("Bob") == LookAlikeNames.skeleton("B0B"))
    }

    @Test(arguments: [("Ada Lovelace", "Ada Lovelock"), ("Grace", "Gracie"), ("Иван", "Ivan"), ("李雷", "李蕾"), ("Ana", "Anna")])
    func differentNamesStayApart(one: String, other: String) {
        #expect(LookAlikeNames.skeleton(one) != LookAlikeNames.skeleton(other))
    }

    /// The web client's `nameSkeleton` gave these skeletons (look-alike-names.json, written by
    /// scripts/look-alike-fixture.mjs; test_web_hostile_round4.py holds the page to them): both
    /// clients read names alike.
    @Test func theWebClientReadsNamesTheSameWay() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("look-alike-names.json")
        // Pairs, not an object: two spellings of one name (composed, decomposed) would be one key.
        let pairs = try JSONDecoder().decode([[String]].self, from: Data(contentsOf: fixture))
        #expect(pairs.count >= 30 && pairs.allSatisfy { $0.count == 2 })
        for pair in pairs { #expect(LookAlikeNames.skeleton(pair[0]) == pair[1], "\(pair[0].unicodeScalars.map { String($0.value, radix: 16) })") }
        // The two tables are one: the fixture (scripts/look-alike-fixture.mjs) names every letter of
        // the web's, and every letter of this one must be among them.
        let named = Set(pairs.flatMap { $0[0].unicodeScalars })
        let missing = Validation.lookalikes.keys.filter { !named.contains($0) }
        #expect(missing.isEmpty, "letters only Swift reads as Latin: \(missing.map { String($0.value, radix: 16) })")
    }

    /// Rule 2: both of a pair are marked (each shows their username), a lone name is not.
    @Test func everyoneOfALookAlikePairIsMarked() {
        let people = [(id: 1, name: "Ada Lovelace"), (id: 2, name: "Аda Lovelace"), (id: 3, name: "Grace Hopper"), (id: 4, name: "ada lovelace")]
        #expect(LookAlikeNames.ambiguous(people) == [1, 2, 4])
        #expect(LookAlikeNames.ambiguous([(id: 1, name: "Ada"), (id: 2, name: "Grace")]).isEmpty)
    }

    /// Rule 3: "Ada Lovelace: Bob" writing "approve it" would read as Ada writing "Bob: approve it".
    @Test(arguments: ["Ada Lovelace: Bob", "Ada Lovelace：Bob", "Ada Lovelace∶ Bob", "Ada Lovelace꞉Bob", "Ada Lovelaceꓽ Bob", "a:b"])
    func aNameWithAColonIsMarked(name: String) {
        #expect(LookAlikeNames.hasColon(name))
    }

    @Test(arguments: ["Ada Lovelace", "Grace Hopper-Smith", "Ana (work)", "李雷"])
    func aNameWithoutOneIsNot(name: String) {
        #expect(!LookAlikeNames.hasColon(name))
    }
}
