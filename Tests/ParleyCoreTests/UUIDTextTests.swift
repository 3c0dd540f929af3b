import Foundation
import ParleyCore
import Testing

/// Ids are parsed and made without Foundation's `UUID` on the hot path. Parsing accepts only the
/// canonical `8-4-4-4-12` hex form, giving what Foundation gives for it; Foundation's own parser is
/// looser (`sscanf`: it takes " 65036D6-…" and "-65036D6-…" and turns them into other ids).
@Suite struct UUIDTextTests {
    static func foundation(_ text: String) -> String? { UUID(uuidString: text)?.uuidString.lowercased() }

    @Test func parsingAcceptsTheCanonicalFormOnlyAndAgreesWithFoundationOnIt() {
        let base = UUID().uuidString
        var inputs = [
            base, base.lowercased(), "", "{\(base)}", " \(base)", "\(base) ", String(base.dropLast()), base + "0",
            base.replacingOccurrences(of: "-", with: ""), String(repeating: "é", count: 18), String(repeating: "-", count: 36),
            "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
        ]
        let mixed = String(base.enumerated().map { $0.offset.isMultiple(of: 2) ? Character($0.element.lowercased()) : $0.element })
        inputs.append(mixed)
        // Every position replaced by each of a few characters: a hex digit, a non-hex letter, a dash,
        // a space, a brace and a non-ASCII letter (which changes the byte count).
        for index in 0..<36 {
            for replacement in ["0", "f", "F", "g", "G", "-", " ", "{", "é", "/", ":", "@", "`"] {
                var characters = Array(base)
                characters[index] = Character(replacement)
                inputs.append(String(characters))
            }
        }
        let canonical = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/
        var accepted = 0
        for input in inputs {
            let expected = input.wholeMatch(of: canonical) != nil ? Self.foundation(input) : nil
            #expect(ClientMessageID(validating: input)?.rawValue == expected, "\(input)")
            #expect(UserID(validating: input)?.rawValue == expected, "\(input)")
            if expected != nil { accepted += 1 }
        }
        #expect(accepted == 5 + 32 * 3 + 4, "the five well-formed ones, each hex digit replaced by 0, f or F, each dash by a dash")
    }

    @Test func randomIdsAreVersion4LowercaseAndDistinct() {
        let ids = (0..<2000).map { _ in MessageID.random().rawValue }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(Self.foundation(id) == id, "\(id) is a UUID in lowercase")
            let characters = Array(id)
            #expect(characters[14] == "4", "version 4: \(id)")
            #expect("89ab".contains(characters[19]), "RFC 4122 variant: \(id)")
        }
    }
}
