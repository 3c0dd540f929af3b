import Foundation

/// Display names that read alike: a newcomer named "Аda Lovelace" (a Cyrillic А), "Ada\u{200B}
/// Lovelace" or "ADA LOVELACE" beside Ada in a group. Names are not unique (usernames are), so
/// where two members' names read alike clients add each one's @username, and nobody can pass for
/// another by name alone. The web client applies the same rules (format.js `nameSkeleton`).
///
/// Rules (``LookAlikeNamesTests``):
/// 1. A name's skeleton: compatibility-decomposed (`Ａ` is `A`, `é` is `e` and a mark); invisible
///    characters, marks and spaces dropped; each letter drawn like a Latin one read as it
///    (``Validation/lookalikes``: Cyrillic and Greek capitals, `I`, `1` and `|` as `l`, `0` as `o`);
///    lowercased; `rn` read as `m` and `vv` as `w`.
/// 2. Two names read alike when their skeletons are equal; everyone whose name reads like another
///    one's in the same list is shown with their username.
public enum LookAlikeNames {
    /// Rule 1: what a name looks like, letters that look alike made the same.
    public static func skeleton(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in name.decomposedStringWithCompatibilityMapping.unicodeScalars where !Validation.isInvisible(scalar) {
            scalars.append(Validation.lookalikes[scalar] ?? scalar)
        }
        return String(scalars).lowercased().replacing("ς", with: "σ").replacing("rn", with: "m").replacing("vv", with: "w")
    }

    /// Rule 2: the ids in `people` whose name reads like another's.
    public static func ambiguous<ID: Hashable>(_ people: [(id: ID, name: String)]) -> Set<ID> {
        var bySkeleton: [String: [ID]] = [:]
        for person in people { bySkeleton[skeleton(person.name), default: []].append(person.id) }
        return Set(bySkeleton.values.filter { $0.count > 1 }.joined())
    }
}
