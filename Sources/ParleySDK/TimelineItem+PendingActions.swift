import ParleyCore

/// How the timeline shows my actions still in the outbox: at once, as they will be once answered.
extension TimelineItem {
    /// This item once `entry` (one of my queued actions on it) is applied; `nil` when it hides it.
    func applying(_ entry: OutboxEntry, me: UserID) -> TimelineItem? {
        guard let action = entry.action else { return self }
        var item = self
        switch action.kind {
        case .react:
            guard !isDeleted else { return self }
            item.reactions = Reaction.setting(action.emoji, by: me, in: reactions)
        case .edit:
            guard !isDeleted, text != entry.text else { return self }
            item.text = entry.text
            item.editedAt = entry.createdAt
        case .delete:
            item.text = ""
            item.deletedAt = deletedAt ?? entry.createdAt
            item.reactions = []
        case .hide:
            return nil
        }
        return item
    }

    /// This item with every queued action on `target` applied in order; `nil` once one hides it.
    func applying(_ actions: [OutboxEntry], on target: MessageTarget, me: UserID) -> TimelineItem? {
        var item: TimelineItem? = self
        for entry in actions where entry.action?.target == target { item = item?.applying(entry, me: me) }
        return item
    }
}

extension Reaction {
    /// `reactions` after `user` set their reaction to `emoji` (replacing any earlier one), or
    /// cleared it (`nil`): the rule of one reaction per person per message, as `user` sees it.
    public static func setting(_ emoji: String?, by user: UserID, in reactions: [Reaction]) -> [Reaction] {
        var result = reactions.compactMap { reaction -> Reaction? in
            guard reaction.mine || reaction.userIds.contains(user) else { return reaction }
            var reaction = reaction
            reaction.userIds.removeAll { $0 == user }
            reaction.count -= 1
            reaction.mine = false
            return reaction.count > 0 ? reaction : nil
        }
        guard let emoji else { return result }
        if let index = result.firstIndex(where: { $0.emoji == emoji }) {
            result[index].count += 1
            result[index].userIds.append(user)
            result[index].mine = true
        } else {
            result.append(Reaction(emoji: emoji, count: 1, mine: true, userIds: [user]))
        }
        return result
    }
}
