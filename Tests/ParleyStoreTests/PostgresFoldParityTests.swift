import Logging
@testable import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import PostgresNIO
import Testing

/// ``SearchText/fold(_:)`` against the installed PostgreSQL's `parley_fold`, letter by letter:
/// ``SearchText/unaccentedLetters`` fold what `unaccent` folds and Foundation leaves (ł, ø, æ), and
/// ``SearchText/keptLetters`` keep what Foundation would fold and `unaccent` keeps (й), so a word
/// is found by the same queries on both stores. Two kinds of letters may differ: final sigma (σ in
/// both word indexes: `parley_words` makes it so), and the few whose capital `unaccent` folds and
/// whose small letter it does not (PostgreSQL differs from itself there: Ɩ is i, ɩ is ɩ).
@Suite struct PostgresFoldParityTests {
    static let letters: Set<Unicode.GeneralCategory> = [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter]

    @Test func everyLetterIsFoldedAsPostgreSQLFoldsIt() async throws {
        let store = try await PostgresStore.connect(
            DatabaseURL(try await PostgresTestServer.freshDatabaseAsync()), poolSize: 1, logger: Logger(label: "fold-parity-test"))
        let rows = try await store.transaction { db in
            try await db.rows(
                """
                SELECT cp, parley_fold(chr(cp)), parley_fold(chr(cp)) = parley_fold(lower(chr(cp)))
                FROM (SELECT generate_series(160, 12287) UNION ALL SELECT generate_series(42784, 43007)) AS s(cp)
                WHERE cp NOT BETWEEN 55296 AND 57343
                """, store.logger
            ).map { try $0.decode((Int, String, Bool).self) }
        }
        try await store.close()
        var compared = 0, toASCII = 0, differing: [String] = []
        for (codePoint, postgres, consistent) in rows {
            guard let scalar = Unicode.Scalar(codePoint), Self.letters.contains(scalar.properties.generalCategory), consistent,
                !["ς", "ϲ"].contains(scalar)
            else { continue }
            compared += 1
            if postgres.utf8.allSatisfy({ $0 < 0x80 }) { toASCII += 1 }
            let swift = SearchText.fold(String(Character(scalar)))
            if swift != postgres { differing.append("U+\(String(codePoint, radix: 16, uppercase: true)) \(scalar): \(postgres), not \(swift)") }
        }
        #expect(compared > 2_000 && toASCII > 900, "the letters of Latin, Greek, Cyrillic and the rest up to U+2FFF")
        #expect(differing.isEmpty, "\(differing.count) letters: \(differing.prefix(20).joined(separator: "; "))")
        #expect(SearchText.fold("Łódź Ærø Œuvre ırmak Đorđe Þór") == "lodz aero oeuvre irmak dorde thor")
        #expect(SearchText.fold("Мой ЙОГУРТ, ёлка, Їжак, Ўсё") == "мой йогурт, елка, їжак, ўсе")
    }
}
