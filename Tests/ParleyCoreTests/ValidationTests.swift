import Foundation
import ParleyCore
import Testing

@Suite struct MessageTextValidationTests {
    @Test func trimsWhitespaceAndNewlinesAtBothEnds() throws {
        #expect(try Validation.messageText("  \n hello\nworld \t\n").get() == "hello\nworld")
    }

    @Test(arguments: ["", " ", "\n\n", " \t \n ", "\u{3000}"])
    func emptyOrWhitespaceOnlyIsRefused(text: String) {
        #expect(Validation.messageText(text) == .failure(.init(.textEmpty, "Message text is empty.")))
    }

    /// An empty bubble: zero-width spaces and joiners, selectors, Hangul fillers, the blank Braille
    /// pattern, a mark with nothing to sit on.
    @Test(arguments: ["\u{200B}", " \u{200B}\u{200D}\u{FE0F} ", "\u{3164}", "\u{115F}\u{1160}", "\u{2800}\n\u{2800}", "\u{301}", "\u{2060}\u{FEFF}"])
    func onlyInvisibleCharactersAreRefused(text: String) {
        #expect(Validation.messageText(text) == .failure(.init(.textEmpty, "Message text has only invisible characters.")))
        #expect(Validation.isBlankMessageText(text))
    }

    @Test func onlyControlCharactersAreInvalidCharactersNotEmpty() {
        #expect(Validation.messageText("\u{0}\u{7}") == .failure(.init(.textInvalidCharacters, "Message text contains control characters.")))
    }

    @Test(arguments: ["\u{200B}hi", "❤\u{FE0F}", "\u{3164}.", "ก\u{E34}", "1"])
    func oneVisibleCharacterIsEnough(text: String) throws {
        #expect(try Validation.messageText(text).get() == text)
        #expect(!Validation.isBlankMessageText(text))
    }

    @Test func countsCharactersNotBytesOrScalars() throws {
        let family = "👨‍👩‍👧‍👦"  // one Character, seven scalars, 25 bytes
        let atLimit = String(repeating: family, count: Validation.maxMessageCharacters)
        #expect(try Validation.messageText(atLimit).get().count == Validation.maxMessageCharacters)
        let overLimit = atLimit + "a"
        #expect(throws: Validation.Failure.self) { try Validation.messageText(overLimit).get() }
        #expect((try? Validation.messageText(overLimit).get()) == nil)
        if case .failure(let failure) = Validation.messageText(overLimit) { #expect(failure.code == .textTooLong) }
    }

    @Test func limitAppliesAfterTrimming() throws {
        let padded = "   " + String(repeating: "x", count: Validation.maxMessageCharacters) + "\n\n"
        #expect(try Validation.messageText(padded).get().count == Validation.maxMessageCharacters)
    }

    @Test(arguments: ["a\u{0}b", "bell\u{7}", "esc\u{1B}[31m", "del\u{7F}", "c1\u{85}x", "vt\u{0B}x"])
    func controlCharactersAreRefused(text: String) {
        guard case .failure(let failure) = Validation.messageText(text) else {
            Issue.record("accepted \(text.debugDescription)")
            return
        }
        #expect(failure.code == .textInvalidCharacters)
    }

    @Test func newlineAndTabAreKeptAndCarriageReturnsNormalized() throws {
        #expect(try Validation.messageText("a\tb\r\nc\rd").get() == "a\tb\nc\nd")
        // Windows line endings alone (each "\r\n" is a single Character).
        #expect(try Validation.messageText("line one\r\nline two\r\n\r\nthree").get() == "line one\nline two\n\nthree")
    }

    @Test func anyScriptAndEmojiPassUnchanged() throws {
        for text in ["שלום עולם", "مرحبا", "こんにちは", "Ελληνικά", "🇺🇦🏳️‍🌈", "<script>alert(1)</script>"] {
            #expect(try Validation.messageText(text).get() == text)
        }
    }

    /// One "character" of 100,001 scalars was one character of 200 KB, repeated by every quote of it.
    @Test func aCharacterCarriesAtMost32Scalars() throws {
        let marks = { (count: Int) in "a" + String(repeating: "\u{301}", count: count) }
        // As much as real text and emoji need: the longest emoji sequences, stacked Thai and Vietnamese marks, jamo.
        for text in ["🧑🏻‍❤️‍💋‍🧑🏼 kiss", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "ก\u{E34}\u{E49}", "e\u{302}\u{301}", "\u{1100}\u{1161}\u{11A8}", marks(31), "zalgo " + marks(20) + marks(20)] {
            #expect(try Validation.messageText(text).get() == text)
        }
        let refused = Validation.Failure(.textInvalidCharacters, "Message text has a character carrying more than 32 accents or marks.")
        for text in [marks(32), marks(100_000), "fine, then " + marks(40), String(repeating: "\u{1100}", count: 40)] {
            #expect(throws: refused) { try Validation.messageText(text).get() }
        }
        #expect((try? Validation.displayName(marks(40)).get()) == nil, "a name is one line of a list")
        #expect(throws: Validation.Failure(.invalidTitle, "Title has a character carrying more than 32 accents or marks.")) {
            try Validation.groupTitle("Trip " + marks(100)).get()
        }
        #expect(try Validation.displayName("Zoë " + marks(31)).get() == "Zoë " + marks(31))
    }
}

@Suite struct AccountValidationTests {
    @Test func usernamesAreLowercasedAndLimitedToASafeAlphabet() throws {
        #expect(try Validation.username("Alice_01.x").get() == "alice_01.x")
        for bad in ["ab", String(repeating: "a", count: 33), "has space", "émile", "semi;colon", ""] {
            #expect((try? Validation.username(bad).get()) == nil, "\(bad) should be refused")
        }
    }

    /// "You" is every client's name for the user's own messages: no name may pass for it.
    @Test(arguments: [
        "You", "YOU", "ｙｏｕ", "Y o u", "Yo\u{200B}u", "Yοu", "Yоu", "Yoᴜ", "ʏᴏᴜ", "Yöu", "Y0u", "Үоu", "уоu", "Ꭹօս", "Yὸu",
    ])
    func namesThatReadYouAreKeptBack(_ name: String) {
        #expect(Validation.isReservedName(name), "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
        #expect((try? Validation.displayName(name).get()) == nil)
    }

    @Test(arguments: ["Yours", "Yo", "Youssef", "Yogi", "Lou", "ὸ", "Yu"])
    func namesThatOnlyStartOrLookLikeItAreFine(_ name: String) {
        #expect(!Validation.isReservedName(name))
    }

    @Test func displayNamesAreTrimmedAndBounded() throws {
        #expect(try Validation.displayName("  Zoë Ångström ").get() == "Zoë Ångström")
        #expect((try? Validation.displayName("   ").get()) == nil)
        #expect((try? Validation.displayName(String(repeating: "n", count: 65)).get()) == nil)
        #expect((try? Validation.displayName("two\nlines").get()) == nil)
        #expect((try? Validation.displayName("Ada\u{202E}nimda").get()) == nil, "a direction override makes a name read as another")
        #expect(try Validation.displayName("שלום Ada").get() == "שלום Ada", "right-to-left scripts themselves are names")
        // "(@username)" is the clients' mark on look-alike names (LookAlikeNames): no name may fake it.
        for faked in ["Ada Lovelace (@ada)", "Ada ＠ada", "﹫ada", "a@b", "Ada Lovelace (ⓐada)", "Ada (Ⓐada)", "Ada (a\u{20DD}da)", "Ada (🅐da)"] {
            #expect(throws: Validation.Failure(.invalidDisplayName, "Display name cannot contain \"@\" or letters in circles: they mark usernames.")) {
                try Validation.displayName(faked).get()
            }
        }
        // Padding that pushed that mark out of sight (blank Braille, Hangul fillers, zero-width spaces, U+FFFC).
        for padded in ["Ada Lovelace" + String(repeating: "\u{2800}", count: 50), "Ada\u{3164}Lovelace", "Ada\u{200B} Lovelace", "Ada Lovelace\u{FFFC}"] {
            #expect(throws: Validation.Failure(.invalidDisplayName, "Display name cannot hold blank fillers or zero-width spaces.")) {
                try Validation.displayName(padded).get()
            }
        }
        // Runs of spaces of any width are one space: a typo, or padding.
        #expect(try Validation.displayName("Ada  Lovelace").get() == "Ada Lovelace")
        #expect(try Validation.displayName("Ada Lovelace" + String(repeating: "\u{2003}", count: 30) + "x").get() == "Ada Lovelace\u{2003}x")
        #expect(try Validation.displayName("山田\u{3000}\u{3000}太郎").get() == "山田\u{3000}太郎")
        for real in ["Team 1️⃣", "#️⃣ team", "Room ①", "Zimmer\u{AD}mann", "Jo (she/her)", "J. R. R. Tolkien"] {
            #expect(try Validation.displayName(real).get() == real, "\(real)")
        }
        #expect(try Validation.displayName("山田\u{3000}太郎").get() == "山田\u{3000}太郎", "one ideographic space, as Japanese names are written")
        #expect(try Validation.displayName("👩\u{200D}💻 Ada 🇺🇦").get() == "👩\u{200D}💻 Ada 🇺🇦", "emoji joiners and flags stay")
        #expect(try Validation.displayName("🆗 Bob 🅱").get() == "🆗 Bob 🅱", "squared letters draw nothing like @")
    }

    @Test func fileNamesLoseInvisibleCharactersAndAvoidDeviceNames() {
        #expect(Attachments.cleanName("zw\u{200B}sp\u{200D}.exe") == "zwsp\u{200D}.exe", "zero-width space out; the emoji joiner stays")
        #expect(Attachments.cleanName("a\u{2028}b\u{FEFF}\u{061C}.txt") == "ab.txt")
        #expect(Attachments.cleanName("invoice\u{202E}gpj.exe") == "invoicegpj.exe")
        #expect(Attachments.cleanName("CON") == "_CON" && Attachments.cleanName("nul.txt") == "_nul.txt" && Attachments.cleanName("COM1.exe") == "_COM1.exe")
        #expect(Attachments.cleanName("console.log") == "console.log" && Attachments.cleanName("COM10.txt") == "COM10.txt")
        for device in ["COM0.txt", "LPT0.txt", "COM¹.txt", "lpt³.txt", "CONIN$", "CONOUT$.txt", "CON .txt", "aux .tar.gz"] {
            #expect(Attachments.cleanName(device) == "_" + device, "\(device)")
        }
        #expect(Attachments.cleanName("COM⁴.txt") == "COM⁴.txt" && Attachments.cleanName("CONINS.txt") == "CONINS.txt")
        #expect(Attachments.cleanName("\u{200B}\u{FEFF}") == "file")
    }

    @Test func aLongFileNameIsCutBeforeItsExtension() {
        let long = String(repeating: "é", count: 200) + ".pdf"
        let cut = Attachments.cleanName(long)
        #expect(cut.utf8.count <= 255 && cut.hasSuffix(".pdf") && cut.hasPrefix("éé"))
        #expect(Attachments.cleanName(String(repeating: "x", count: 300)).utf8.count == 255)
        #expect(Attachments.cleanName("a." + String(repeating: "y", count: 300)).utf8.count == 255, "no extension that long: cut at the end")
        let archive = Attachments.cleanName(String(repeating: "b", count: 300) + ".tar.gz")
        #expect(archive.utf8.count == 255 && archive.hasSuffix("bb.tar.gz"), "a double extension kept whole")
        let dotted = Attachments.cleanName("v1." + String(repeating: "c", count: 300) + ".final draft.pdf")
        #expect(dotted.utf8.count == 255 && dotted.hasSuffix("c.final draft.pdf") == false && dotted.hasSuffix("c.pdf"), "not a word with a space")
    }

    @Test func passwordsAreEightToSeventyTwoBytes() {
        #expect((try? Validation.password("1234567").get()) == nil)
        #expect((try? Validation.password("12345678").get()) != nil)
        #expect((try? Validation.password(String(repeating: "é", count: 128)).get()) != nil, "256 bytes: all of it counts")
        #expect((try? Validation.password(String(repeating: "é", count: 129)).get()) == nil)
        for control in ["\u{0}", "\t", "\n", "\u{7F}", "\u{85}"] {
            #expect((try? Validation.password("abcdefgh\(control)ijk").get()) == nil)
        }
    }

    @Test func searchQueriesAreLongEnoughAndPrintable() {
        #expect((try? Validation.searchQuery("al").get()) == nil)
        #expect((try? Validation.searchQuery("ALI").get()) == "ali")
        #expect((try? Validation.searchQuery("al\u{0}i").get()) == nil)
        #expect((try? Validation.searchQuery(String(repeating: "a", count: 65)).get()) == nil)
    }
}

@Suite struct IdentifierTests {
    @Test func directConversationIdIsTheSameFromBothSides() {
        let a = UserID.random(), b = UserID.random()
        #expect(ConversationID.direct(a, b) == ConversationID.direct(b, a))
        #expect(ConversationID(validating: ConversationID.direct(a, b).rawValue) == ConversationID.direct(a, b))
    }

    @Test func malformedConversationIdsAreRefused() {
        let a = UserID.random(), b = UserID.random()
        let (low, high) = a < b ? (a, b) : (b, a)
        for bad in ["", "dm_", "dm_x_y", "gr_\(low)_\(high)", "dm_\(high)_\(low)", "dm_\(low)_\(low)", "dm_\(low)_\(high)_x"] {
            #expect(ConversationID(validating: bad) == nil, "\(bad)")
        }
    }

    /// The in-place check of ``ConversationID/init(validating:)`` agrees with the rule as written:
    /// `dm_`, two user ids (either case, normalized to lowercase), the lower one first.
    @Test func conversationIdsAreCheckedAsTheirRuleSays() {
        func byTheRule(_ string: String) -> String? {
            let parts = string.split(separator: "_", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "dm", let a = UserID(validating: String(parts[1])),
                let b = UserID(validating: String(parts[2])), a < b
            else { return nil }
            return "dm_\(a.rawValue)_\(b.rawValue)"
        }
        let (a, b) = {
            let x = UserID.random(), y = UserID.random(); return x < y ? (x, y) : (y, x)
        }()
        let id = ConversationID.direct(a, b).rawValue
        var inputs = [
            id, id.uppercased(), "dm_\(a.rawValue.uppercased())_\(b.rawValue)", "dm_\(a.rawValue)_\(b.rawValue.uppercased())",
            "dm_\(b.rawValue)_\(a.rawValue)", "dm_\(a.rawValue)_\(a.rawValue)", String(id.dropLast()), id + "0", "x" + id,
        ]
        for index in 0..<id.count {
            for replacement in ["0", "f", "F", "g", "-", "_", " ", "é"] {
                var characters = Array(id)
                characters[index] = Character(replacement)
                inputs.append(String(characters))
            }
        }
        var accepted = 0
        for input in inputs {
            let expected = byTheRule(input)
            #expect(ConversationID(validating: input)?.rawValue == expected, "\(input)")
            if expected != nil { accepted += 1 }
        }
        #expect(accepted > 100, "the id, its uppercase forms and most hex digits replaced by hex digits")
    }

    @Test func clientIdsMustBeUUIDsAndAreNormalized() {
        #expect(ClientMessageID(validating: "not-a-uuid") == nil)
        #expect(ClientMessageID(validating: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")?.rawValue == "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
    }
}
