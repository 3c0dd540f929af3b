import Foundation

/// Display names that read alike: a newcomer named "Аda Lovelace" (a Cyrillic А), "Ada\u{200B}
/// Lovelace" or "ADA LOVELACE" beside Ada in a group. Names are not unique (usernames are), so
/// where two names read alike clients add the @username, and nobody can pass for another by name
/// alone (a display name has no "@": ``Validation/displayName(_:)``, so the mark cannot be faked).
/// The web client applies the same rules (format.js `nameSkeleton`).
///
/// Rules (``LookAlikeNamesTests``):
/// 1. A name's skeleton: compatibility-decomposed (`Ａ` is `A`, `é` is `e` and a mark); invisible
///    characters, marks, spaces and punctuation dropped; each letter drawn like a Latin one read as it
///    (``Validation/lookalikes``: Cyrillic and Greek capitals, `I`, `i`, `1` and `|` as `l`, `0`
///    as `o`), then lowercased and read so again (a capital's small letter: `Σ` is `σ`, read as
///    `o`); `rn` read as `m` and `vv` as `w`. Scalar by scalar, so the web's code units agree.
/// 2. Two names read alike when their skeletons are equal; everyone whose name reads like another
///    one's in the same list is shown with their username.
/// 3. A name with a colon in it (or a character drawn like one) is shown with its username wherever
///    it is: clients write "name: text", so "Ada Lovelace: Bob" writing "approve it" reads as Ada
///    writing "Bob: approve it".
public enum LookAlikeNames {
    /// Rule 1: what a name looks like, letters that look alike made the same.
    public static func skeleton(_ name: String) -> String {
        let visible = name.decomposedStringWithCompatibilityMapping.unicodeScalars.filter { !Validation.isInvisible($0) && !isPunctuation($0) }
        let read = String(String.UnicodeScalarView(visible.map { Validation.lookalikes[$0] ?? $0 })).lowercased()
        var scalars: [Unicode.Scalar] = []
        for scalar in read.unicodeScalars.map({ Validation.lookalikes[$0] ?? $0 }) {
            switch (scalars.last, scalar) {
            case ("r", "n"): scalars[scalars.count - 1] = "m"
            case ("v", "v"): scalars[scalars.count - 1] = "w"
            default: scalars.append(scalar)
            }
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// Punctuation draws little and means less in a name: "Ada Lovelace." and "Ada-Lovelace" read
    /// as "Ada Lovelace".
    static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation, .finalPunctuation,
            .otherPunctuation:
            true
        default: false
        }
    }

    /// Rule 2: the ids in `people` whose name reads like another's.
    public static func ambiguous<ID: Hashable>(_ people: [(id: ID, name: String)]) -> Set<ID> {
        ambiguous(skeletons: people.map { (id: $0.id, skeleton: skeleton($0.name)) })
    }

    /// Rule 3: whether `name` holds a colon, or a character drawn like one.
    public static func hasColon(_ name: String) -> Bool {
        name.unicodeScalars.contains { colons.contains($0) }
    }

    /// ":" and what is drawn like it (fullwidth, small, vertical and presentation forms, ratio,
    /// modifier letters, Lisu's tone letter, Hebrew sof pasuq, Armenian, Syriac, Ethiopic and
    /// Mongolian colons, two dots). The web client's `COLONS`.
    static let colons: Set<Unicode.Scalar> = [
        ":", "\u{FF1A}", "\u{FE55}", "\u{FE13}", "\u{FE30}", "\u{2236}", "\u{A789}", "\u{A4FD}", "\u{02F8}", "\u{02D0}", "\u{05C3}",
        "\u{0589}", "\u{0703}", "\u{0704}", "\u{1361}", "\u{1804}", "\u{205A}", "\u{2982}",
    ]

    /// Rule 2 on skeletons already worked out (by ``skeleton(_:)``).
    public static func ambiguous<ID: Hashable>(skeletons: [(id: ID, skeleton: String)]) -> Set<ID> {
        var bySkeleton: [String: [ID]] = [:]
        for person in skeletons { bySkeleton[person.skeleton, default: []].append(person.id) }
        return Set(bySkeleton.values.filter { $0.count > 1 }.joined())
    }
}
