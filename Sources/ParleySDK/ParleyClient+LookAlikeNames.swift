import ParleyCore

extension ParleyClient {
    /// A person's name as a chat shows it to tell people apart: ``displayName(of:in:)``, with
    /// " (@username)" added when their name reads like another's (``LookAlikeNames``): in a group,
    /// another member's (me aside: I am "You"); in a direct conversation, the person of another of
    /// my direct conversations. An "Аda Lovelace" with a Cyrillic А beside Ada shows as
    /// "Аda Lovelace (@ada_fake)", and Ada as "Ada Lovelace (@ada)".
    public func distinguishableName(of user: UserID, in conversation: ConversationID) -> String? {
        guard let name = displayName(of: user, in: conversation) else { return nil }
        guard user != me.id, let summary = conversations[conversation], let member = summary.members.first(where: { $0.userId == user })
        else { return name }
        let alike = summary.kind == .group ? lookAlikeMembers(of: conversation, summary.members) : lookAlikePeopleOfDirectChats()
        return alike.contains(user) ? "\(name) (@\(member.username))" : name
    }

    /// The members of `conversation` whose names read like another's, worked out again only when a name changed.
    private func lookAlikeMembers(of conversation: ConversationID, _ members: [ConversationMember]) -> Set<UserID> {
        let names = namesByUser(members.filter { $0.userId != me.id })
        if let known = lookAlikes[conversation], known.names == names { return known.ids }
        let ids = LookAlikeNames.ambiguous(names.map { (id: $0.key, name: $0.value) })
        lookAlikes[conversation] = (names, ids)
        return ids
    }

    /// The people of my direct conversations whose names read like another's of them: two chats
    /// named "Ada Lovelace" in the list are told apart by username.
    private func lookAlikePeopleOfDirectChats() -> Set<UserID> {
        let names = namesByUser(conversations.values.filter { $0.kind == .direct }.compactMap(otherMember(of:)))
        if let known = directLookAlikes, known.names == names { return known.ids }
        let ids = LookAlikeNames.ambiguous(names.map { (id: $0.key, name: $0.value) })
        directLookAlikes = (names, ids)
        return ids
    }

    private func namesByUser(_ members: [ConversationMember]) -> [UserID: String] {
        Dictionary(members.map { ($0.userId, $0.displayName) }, uniquingKeysWith: { first, _ in first })
    }
}
