import Logging
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// ``SearchText/unaccentedLetters`` against the installed PostgreSQL: every letter that
/// `parley_fold` makes plain ASCII, ``SearchText/fold(_:)`` makes the same, so a word with ł, ø or
/// æ is found by the same queries on both stores. (The other way round is allowed to differ: a few
/// letters keep a mark under `unaccent`, Cyrillic й among them; docs/protocol.md "Search".)
@Suite struct PostgresFoldParityTests {
    static let letters: Set<Unicode.GeneralCategory> = [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter]

    @Test func everyLetterPostgreSQLMakesASCIIIsFoldedTheSame() async throws {
        let store = try await PostgresStore.connect(
            DatabaseURL(try await PostgresTestServer.freshDatabaseAsync()), poolSize: 1, logger: Logger(label: "fold-parity-test"))
        let rows = try await store.transaction { db in
            try await db.rows(
                """
                SELECT cp, parley_fold(chr(cp)) FROM generate_series(160, 12287) AS cp
                WHERE cp NOT BETWEEN 55296 AND 57343
                UNION ALL SELECT cp, parley_fold(chr(cp)) FROM generate_series(42784, 43007) AS cp
                """, store.logger
            ).map { try $0.decode((Int, String).self) }
        }
        try await store.close()
        var compared = 0, differing: [String] = []
        for (codePoint, postgres) in rows {
            guard let scalar = Unicode.Scalar(codePoint), Self.letters.contains(scalar.properties.generalCategory), postgres.utf8.allSatisfy({ $0 < 0x80 })
            else { continue }
            compared += 1
            let swift = SearchText.fold(String(Character(scalar)))
            if swift != postgres { differing.append("U+\(String(codePoint, radix: 16, uppercase: true)) \(scalar): \(postgres), not \(swift)") }
        }
        #expect(compared > 900, "the rules folded as many letters as expected")
        #expect(differing.isEmpty, "\(differing.count) letters: \(differing.prefix(20).joined(separator: "; "))")
        #expect(SearchText.fold("Łódź Ærø Œuvre ırmak Đorđe Þór") == "lodz aero oeuvre irmak dorde thor")
    }
}
