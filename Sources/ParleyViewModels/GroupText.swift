import ParleyCore

/// The words groups show, the same in the chat, the list preview and the terminal. Pure functions.
public enum GroupText {
    /// What a name that is not known yet reads as.
    public static let someone = "Someone"
    /// A group not known here yet (its title comes with its summary).
    public static let group = "Group"
    /// The other person of a direct conversation not known here yet.
    public static let unknownPerson = "Unknown"

    /// The lines a membership entry shows, e.g. ["Ada created the group “Trip”", "Ada added Grace and Alan"].
    ///
    /// Rules: the actor is the entry's sender, "You" when it is me; the people it names are "you"
    /// when one is me; names come from `name` (``someone`` while unknown); titles are in curly
    /// quotes. `created` with members adds an "added" line; `left` by the owner adds who is now owner.
    public static func entryLines(_ entry: GroupEntry, by actor: UserID, me: UserID, name: (UserID) -> String?) -> [String] {
        let who = actor == me ? "You" : (name(actor) ?? someone)
        let ids = entry.userIds ?? []
        let them = joinNames(ids.map { $0 == me ? "you" : (name($0) ?? someone) })
        switch entry.type {
        case .created:
            let created = "\(who) created the group “\(entry.title ?? "")”"
            return ids.isEmpty ? [created] : [created, "\(who) added \(them)"]
        case .added: return ["\(who) added \(them)"]
        case .joined: return ["\(who) joined"]
        case .removed: return ["\(who) removed \(them)"]
        case .left:
            guard entry.role == .owner, let heir = ids.first else { return ["\(who) left"] }
            return ["\(who) left", heir == me ? "You are now the owner" : "\(name(heir) ?? someone) is now the owner"]
        case .role:
            return [entry.role == .admin ? "\(who) made \(them) an admin" : "\(who) dismissed \(them) as admin"]
        case .renamed: return ["\(who) renamed the group to “\(entry.title ?? "")”"]
        }
    }

    /// Who is typing, in the order they started: "Ada is typing…", "Ada and Grace are typing…",
    /// "3 people are typing…" (three or more); empty when nobody is.
    public static func typing(_ names: [String]) -> String {
        switch names.count {
        case 0: ""
        case 1: "\(names[0]) is typing…"
        case 2: "\(names[0]) and \(names[1]) are typing…"
        default: "\(names.count) people are typing…"
        }
    }

    /// "Ada", "Ada and Grace", "Ada, Grace and Alan".
    public static func joinNames(_ names: [String]) -> String {
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
    }

    /// A role as a member list shows it: "Owner", "Admin", nothing for a member.
    public static func roleLabel(_ role: MemberRole?) -> String? {
        switch role {
        case .owner: "Owner"
        case .admin: "Admin"
        case .member, nil: nil
        }
    }
}
