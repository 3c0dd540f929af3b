import ParleyCore

extension ParleyClient {
    /// A person's name as a chat shows it to tell people apart: ``displayName(of:in:)``, with
    /// " (@username)" added when another member of the conversation (me aside: I am "You") has a
    /// name that reads alike (``LookAlikeNames``): an "Аda Lovelace" with a Cyrillic А beside Ada
    /// shows as "Аda Lovelace (@ada_fake)", and Ada as "Ada Lovelace (@ada)".
    public func distinguishableName(of user: UserID, in conversation: ConversationID) -> String? {
        guard let name = displayName(of: user, in: conversation) else { return nil }
        guard let members = conversations[conversation]?.members, members.count > 2,
            let member = members.first(where: { $0.userId == user }), lookAlikeMembers(of: conversation, members).contains(user)
        else { return name }
        return "\(name) (@\(member.username))"
    }

    /// The members of `conversation` whose names read like another's, worked out again only when a name changed.
    private func lookAlikeMembers(of conversation: ConversationID, _ members: [ConversationMember]) -> Set<UserID> {
        let others = members.filter { $0.userId != me.id }
        let names = Dictionary(others.map { ($0.userId, $0.displayName) }, uniquingKeysWith: { first, _ in first })
        if let known = lookAlikes[conversation], known.names == names { return known.ids }
        let ids = LookAlikeNames.ambiguous(others.map { (id: $0.userId, name: $0.displayName) })
        lookAlikes[conversation] = (names, ids)
        return ids
    }
}
