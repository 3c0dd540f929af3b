import ParleyCore

/// Whose names must be told apart in one conversation (``ParleyClient/nameMarks(in:)``): worked
/// out once for a screen's pass over its rows, not once per row.
public struct LookAlikeMarks: Sendable {
    /// The names it was worked out from, by person.
    let names: [UserID: String]
    /// The people whose names read like another's of them.
    public let ids: Set<UserID>
    /// The skeletons of their names (``LookAlikeNames``): someone else, no longer a member, whose
    /// name has one of them is told apart too.
    let skeletons: Set<String>

    init(names: [UserID: String]) {
        self.names = names
        let read = names.map { (id: $0.key, skeleton: LookAlikeNames.skeleton($0.value)) }  // each name read once
        ids = LookAlikeNames.ambiguous(skeletons: read).union(names.filter { LookAlikeNames.hasColon($0.value) }.keys)  // rules 2 and 3
        skeletons = Set(read.map(\.skeleton))
    }
}

extension ParleyClient {
    /// A person's name as a chat shows it to tell people apart: ``displayName(of:in:)``, with
    /// " (@username)" added when their name reads like another's (``LookAlikeNames``): in a group,
    /// another member's (me aside: I am "You"), or a member's when they are no longer one; in a
    /// direct conversation, the person of another of my direct conversations. An "Аda Lovelace"
    /// with a Cyrillic А beside Ada shows as "Аda Lovelace (@ada_fake)", and Ada as "Ada Lovelace
    /// (@ada)". `marks`: ``nameMarks(in:)`` worked out beforehand, for many names in one pass.
    public func distinguishableName(of user: UserID, in conversation: ConversationID, marks: LookAlikeMarks? = nil) -> String? {
        guard let name = displayName(of: user, in: conversation) else { return nil }
        guard user != me.id, let summary = conversations[conversation] else { return name }
        let marks = marks ?? nameMarks(in: conversation)
        if let member = summary.members.first(where: { $0.userId == user }) {
            return marks.ids.contains(user) ? "\(name) (@\(member.username))" : name
        }
        // Gone from the group (or never listed): told apart when their name reads like a member's.
        guard summary.kind == .group, marks.skeletons.contains(LookAlikeNames.skeleton(name)) else { return name }
        return "\(name) (\(username(of: user).map { "@" + $0 } ?? "former member"))"
    }

    /// Rule 2 of ``LookAlikeNames`` for `conversation`: among a group's members (me aside), or
    /// among the people of my direct conversations; worked out again only when a name changed.
    public func nameMarks(in conversation: ConversationID) -> LookAlikeMarks {
        guard let summary = conversations[conversation], summary.kind == .group else { return directNameMarks() }
        let names = namesByUser(summary.members.filter { $0.userId != me.id })
        if let known = lookAlikes[conversation], known.names == names { return known }
        let marks = LookAlikeMarks(names: names)
        lookAlikes[conversation] = marks
        return marks
    }

    /// ``nameMarks(in:)`` for every direct conversation (the same for all), for a list's pass over its rows.
    public func directNameMarks() -> LookAlikeMarks {
        let names = namesByUser(conversations.values.filter { $0.kind == .direct }.compactMap(otherMember(of:)))
        if let known = directLookAlikes, known.names == names { return known }
        let marks = LookAlikeMarks(names: names)
        directLookAlikes = marks
        return marks
    }

    /// A person's username, from any conversation that lists them or as fetched by id.
    private func username(of user: UserID) -> String? {
        users[user]?.username ?? conversations.values.lazy.compactMap { $0.members.first { $0.userId == user }?.username }.first
    }

    private func namesByUser(_ members: [ConversationMember]) -> [UserID: String] {
        Dictionary(members.map { ($0.userId, $0.displayName) }, uniquingKeysWith: { first, _ in first })
    }
}
