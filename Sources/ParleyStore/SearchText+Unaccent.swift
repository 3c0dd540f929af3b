/// The letters PostgreSQL's `unaccent` folds (its default rules, as `parley_fold` uses them) that
/// Foundation's diacritic folding leaves as they are, because Unicode gives them no base letter
/// and mark to take apart: ł is l, ø is o, æ is ae, ı is i, ð and đ are d, þ is th, œ is oe. With
/// them, `lodz` finds Łódź and `aero` finds Ærø on SQLite as on PostgreSQL
/// (``PostgresFoldParityTests`` holds the table to the installed rules).
///
/// Keys are what ``SearchText/fold(_:)`` makes of a letter before this table (lowercase); values
/// what `unaccent` makes of it. The other way round, ``keptLetters`` keep the mark Foundation
/// would take off.
extension SearchText {
    static let unaccentedLetters: [Unicode.Scalar: String] = {
        var table: [Unicode.Scalar: String] = [:]
        for entry in unaccentedPairs.split(whereSeparator: \.isWhitespace) {
            guard let letter = entry.unicodeScalars.first else { continue }
            table[letter] = String(String.UnicodeScalarView(entry.unicodeScalars.dropFirst()))
        }
        return table
    }()

    /// Each letter, then what it folds to (no spaces in either).
    private static let unaccentedPairs = #"""
        æae ðd øo þth đd ħh ıi ĸq łl ŋn œoe ŧt ƀb ƃb ƈc ƌd ƒf ƕhv ƙk ƚl ƞn ƣoi ƥp ƫt ƭt ƴy ƶz ǥg ȡd ȥz
        ȴl ȵn ȶt ȷj ȸdb ȹqp ȼc ȿs ɀz ɇe ɉj ɍr ɏy ɓb ɕc ɖd ɗd ɛe ɟj ɠg ɡg ɢg ɦh ɧh ɨi ɪi ɫl ɬl ɭl ɱm
        ɲn ɳn ɴn ɶoe ɼr ɽr ɾr ʀr ʂs ʈt ʉu ʋv ʏy ʐz ʑz ʙb ʛg ʜh ʝj ʟl ʠq ʣdz ʥdz ʦts ʪls ʫlz ʹ' ʺ" ʻ' ʼ'
        ʽ' ˆ^ ˈ' ˋ` ː: ᴀa ᴁae ᴃb ᴄc ᴅd ᴆd ᴇe ᴊj ᴋk ᴌl ᴍm ᴏo ᴘp ᴛt ᴜu ᴠv ᴡw ᴢz ᵫue ᵬb ᵭd ᵮf ᵯm ᵰn ᵱp ᵲr
        ᵳr ᵴs ᵵt ᵶz ᵺth ᵻi ᵽp ᵾu ᶀb ᶁd ᶂf ᶃg ᶄk ᶅl ᶆm ᶇn ᶈp ᶉr ᶊs ᶌv ᶍx ᶎz ᶏa ᶑd ᶒe ᶓe ᶖi ᶙu ẜs ẝs ỻll
        ỽv ỿy ⱡl ⱥa ⱦt ⱨh ⱪk ⱬz ⱱv ⱳw ⱴv ⱸe ⱺo ꜰf ꜱs ꜳaa ꜵao ꜷau ꜹav ꜻav ꜽay ꝁk ꝃk ꝅk ꝇl ꝉl ꝋo ꝍo ꝏoo ꝑp
        ꝓp ꝕp ꝗq ꝙq ꝟv ꝡvy ꝥth ꝧth ꝱd ꝲl ꝳm ꝴn ꝵr ꝶr ꝷt ꝺd ꝼf ꞇt ꞑn ꞓc ꞡg ꞣk ꞥn ꞧr ꞩs
        """#

    /// Letters of their own that Foundation would fold into another and `unaccent` keeps, as do
    /// the languages that write them: Cyrillic й is not и, ї is not і, ў is not у (ё is е in both
    /// folds), and a few Latin ones (ǣ, ǿ). ``SearchText/fold(_:)`` lowercases them and keeps them.
    static let keptLetters: Set<Unicode.Scalar> = {
        var kept = Set<Unicode.Scalar>()
        for letter in "йѐѓїќѝўѷӂӑӓӗӛӝӟӣӥӧӫӭӯӱӳӵӹǣǯǽǿ".unicodeScalars {
            kept.insert(letter)
            kept.formUnion(String(letter).uppercased().unicodeScalars)
        }
        return kept
    }()

    /// Whether `scalar` is one of ``keptLetters`` (only their two blocks are looked up).
    static func isKept(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1E2...0x1FF, 0x400...0x4FF: keptLetters.contains(scalar)
        default: false
        }
    }

    /// `folded` with ``unaccentedLetters`` taken off; most texts have none and are returned as they are.
    static func unaccented(_ folded: String) -> String {
        // The table's blocks: Greek, Cyrillic and the rest skip the lookup.
        func mapped(_ scalar: Unicode.Scalar) -> String? {
            switch scalar.value {
            case 0xE6...0x2D0, 0x1D00...0x1D99, 0x1E9C...0x1EFF, 0x2C61...0x2C7A, 0xA730...0xA7A9: unaccentedLetters[scalar]
            default: nil
            }
        }
        guard folded.unicodeScalars.contains(where: { mapped($0) != nil }) else { return folded }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(folded.utf8.count + 8)
        for scalar in folded.unicodeScalars {
            if let replacement = mapped(scalar) { bytes += replacement.utf8 } else { UTF8.encode(scalar) { bytes.append($0) } }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
