import Foundation
import ParleyCore
import Testing

@Suite struct GroupValidationTests {
    @Test func titlesAreTrimmedAndBounded() throws {
        #expect(try Validation.groupTitle("  Lisbon 🇵🇹  ").get() == "Lisbon 🇵🇹")
        #expect(try Validation.groupTitle(String(repeating: "👨‍👩‍👧‍👦", count: 100)).get().count == 100)
        #expect(try Validation.groupTitle("e\u{0301}t\u{200D}é").get() == "e\u{0301}t\u{200D}é", "marks and joiners beside something visible stay")
        #expect(throws: Validation.Failure.self) { try Validation.displayName("\u{200B}\u{200B}").get() }
        for bad in [
            "", "   ", "\n\t", String(repeating: "a", count: 101), "tab\there", "line\nbreak", "nul\u{0}", "Family\u{202E}nimda", "a\u{2066}b\u{2069}",
            "\u{200B}", "\u{FEFF}", "\u{200B}\u{FEFF}", "\u{200F}", "\u{061C}", "\u{0301}", "a\u{2028}b", "a\u{2029}b",
        ] {
            #expect(throws: Validation.Failure.self, "\(bad.debugDescription)") { try Validation.groupTitle(bad).get() }
        }
    }

    @Test func mentionsAreUsernamesAfterAnAtThatStartsAWord() {
        #expect(Validation.mentionedUsernames(in: "hi @Grace and @alan.turing, see @grace again") == ["grace", "alan.turing"])
        #expect(Validation.mentionedUsernames(in: "mail ada@example.com or @ab") == [], "an address, and a name too short")
        #expect(Validation.mentionedUsernames(in: "end of sentence @ada.") == ["ada"])
        #expect(Validation.mentionedUsernames(in: "日本語の@ada さん") == [], "a letter before the @ makes it part of a word")
        #expect(Validation.mentionedUsernames(in: "日本語 @ada さん") == ["ada"])
        #expect(Validation.mentionedUsernames(in: "no mentions at all") == [])
        #expect(Validation.mentionedUsernames(in: "@" + String(repeating: "x", count: 40)) == [], "longer than a username can be")
    }

    @Test func groupIdsAreRecognizedAndNormalized() {
        let id = ConversationID.newGroup()
        #expect(id.isGroup && ConversationID(validating: id.rawValue) == id)
        #expect(ConversationID(validating: id.rawValue.uppercased().replacingOccurrences(of: "GRP_", with: "grp_")) == id)
        for bad in ["grp_", "grp_not-a-uuid-at-all-no-no-no-no-no-no", "GRP_" + id.rawValue.dropFirst(4), "grp_\(id.rawValue.dropFirst(4))x"] {
            #expect(ConversationID(validating: bad) == nil, "\(bad)")
        }
    }
}
