import Foundation
import ParleyCore

/// What the interface reads: timelines with statuses, unread counts, who is typing, people's names.
extension ParleyClient {
    /// Messages from others I have not read.
    ///
    /// Entries, my own messages and the deleted and hidden ones never count, which last seq − my read
    /// seq cannot tell for messages this device does not hold, so the server's `unreadCount` is kept:
    /// one more for each new message of someone else after my read cursor, counted again when that
    /// cursor moves (``ParleyClient`` group sync rule 4, for every conversation).
    public func unreadCount(_ id: ConversationID) -> Int64 {
        guard let summary = conversations[id] else { return 0 }
        if let mine = summary.members.first(where: { $0.userId == me.id }), mine.readSeq >= summary.lastSeq { return 0 }
        return max(0, summary.unreadCount)
    }

    /// Unread messages of a group that mention me (`@username`); 0 in a direct conversation.
    public func mentionCount(_ id: ConversationID) -> Int64 {
        unreadCount(id) == 0 ? 0 : max(0, conversations[id]?.mentionCount ?? 0)
    }

    /// Confirmed messages by seq, then my pending ones in the order written; duplicates collapsed.
    /// Membership entries are items of their own (``TimelineItem/entry``), without a status.
    /// Each shows as it is now, with my queued actions applied (``MessageOutbox`` rule 8); a reply's
    /// quote is made from the original as held (so it follows its edits and its deletion), else as
    /// the server last quoted it.
    public func timeline(_ id: ConversationID) -> [TimelineItem] {
        let summary = conversations[id]
        let actions = outbox.pendingActions(in: id)
        let confirmed = (messages[id] ?? [:]).values.sorted { $0.seq < $1.seq }.compactMap { message in
            var item = TimelineItem(message)
            if message.senderId == me.id, message.entry == nil { item.status = MessageStatus.ofMine(seq: message.seq, in: summary, me: me.id) }
            return item.applying(actions, on: .seq(message.seq), me: me.id)
        }
        let confirmedIds = Set(confirmed.map(\.id))
        let pending = outbox.pending(in: id).filter { !confirmedIds.contains($0.clientId) }.compactMap { entry in
            var item = TimelineItem(
                id: entry.clientId, conversationId: id, seq: nil, senderId: me.id, text: entry.text, createdAt: entry.createdAt,
                status: { if case .failed(let reason) = entry.state { .failed(reason: reason) } else { .sending } }()
            ).applying(actions, on: .pending(entry.clientId), me: me.id)
            item?.pendingFiles = entry.attachments ?? []
            return item
        }
        let bySeq = Dictionary(confirmed.compactMap { item in item.seq.map { ($0, item) } }, uniquingKeysWith: { first, _ in first })
        let byClientId = Dictionary(pending.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        func quote(_ target: MessageTarget?, else known: ReplyQuote?) -> ReplyQuote? {
            switch target {
            case .seq(let seq)?:
                guard let original = bySeq[seq] else { return known }
                return ReplyQuote(seq: seq, senderId: original.senderId, text: original.text, deleted: original.isDeleted)
            case .pending(let clientId)?:
                guard let original = byClientId[clientId] else { return known }
                return ReplyQuote(seq: 0, senderId: original.senderId, text: original.text, deleted: original.isDeleted)
            case nil:
                return known
            }
        }
        let quotedConfirmed = confirmed.map { item in
            var item = item
            item.replyTo = quote(item.replyTo.map { .seq($0.seq) }, else: item.replyTo)
            return item
        }
        let quotedPending = pending.map { item in
            var item = item
            item.replyTo = quote(outbox.pendingSend(item.id)?.replyTo, else: nil)
            return item
        }
        return quotedConfirmed + quotedPending
    }

    /// Who is typing in the conversation right now, in the order they started (expired signals ignored).
    public func typingUsers(in id: ConversationID, now: Date = Date()) -> [UserID] {
        (typing[id] ?? []).filter { $0.until > now }.map(\.user)
    }

    /// Someone typing in the conversation right now, if anyone (the first to start).
    public func typingUser(in id: ConversationID, now: Date = Date()) -> UserID? {
        typingUsers(in: id, now: now).first
    }

    /// A person's display name: as a member of `conversation`, of any conversation of mine, or as
    /// fetched by id (former members, inviters). `nil` while unknown: the client fetches the people
    /// its group messages name by itself, and ``users`` changes when they arrive.
    public func displayName(of user: UserID, in conversation: ConversationID? = nil) -> String? {
        if user == me.id { return me.displayName }
        if let conversation, let member = conversations[conversation]?.members.first(where: { $0.userId == user }) { return member.displayName }
        if let known = users[user] { return known.displayName }
        for summary in conversations.values {
            if let member = summary.members.first(where: { $0.userId == user }) { return member.displayName }
        }
        return formerNames[user]
    }

    /// My role in a group (`nil` in a direct conversation, or once I am out).
    public func myRole(in id: ConversationID) -> MemberRole? {
        guard let summary = conversations[id], summary.leftSeq == nil else { return nil }
        return summary.members.first { $0.userId == me.id }?.role
    }

    /// Fetches the people a conversation's held messages name whom no conversation of mine lists
    /// (former members of a group), and waits for them: names are ready when it returns.
    public func resolveNames(in id: ConversationID) async {
        await resolveNames(in: Array((messages[id] ?? [:]).values))
    }

    /// The same for some messages (say, one that just arrived, before printing it).
    public func resolveNames(in messages: [Message]) async {
        for fetch in fetches(for: messages) { await fetch.value }
    }

    /// The same without waiting, for messages as they are stored.
    func startResolvingNames(in messages: [Message]) {
        _ = fetches(for: messages)
    }

    /// One lookup per person per run, shared by everyone waiting for it.
    private func fetches(for messages: [Message]) -> [Task<Void, Never>] {
        var unknown: Set<UserID> = []
        for message in messages where message.conversationId.isGroup {
            for user in [message.senderId] + (message.entry?.userIds ?? []) where displayName(of: user, in: message.conversationId) == nil {
                unknown.insert(user)
            }
        }
        return fetches(of: unknown)
    }

    /// One lookup per person per run, for people named anywhere (search results, say).
    func fetches(of unknown: Set<UserID>) -> [Task<Void, Never>] {
        unknown.map { user in
            if let running = userFetches[user] { return running }
            let fetch = Task { [weak self, api, token = session.token] in
                guard let found = try? await api.user(user, token: token) else { return }
                self?.users[user] = found
            }
            userFetches[user] = fetch
            return fetch
        }
    }
}

extension MessageStatus {
    /// The status of one of my confirmed messages, by the rule of its conversation's kind.
    ///
    /// - Direct conversation: the other member's cursors. Read when their `readSeq ≥ seq`,
    ///   delivered when their `deliveredSeq ≥ seq`, else sent.
    /// - Group: the group's aggregate, never one member's cursors. Read when
    ///   `everyoneReadSeq ≥ seq` (every member of the moment has read it), delivered when
    ///   `everyoneDeliveredSeq ≥ seq` (every one has received it), else sent. The server keeps the
    ///   aggregate and tells the sender when it moves (`receiptSummary`); the client keeps the
    ///   furthest value it has seen.
    /// - Unknown conversation: sent.
    public static func ofMine(seq: Int64, in summary: ConversationSummary?, me: UserID) -> MessageStatus {
        guard let summary else { return .sent }
        let (delivered, read): (Int64, Int64)
        switch summary.kind {
        case .group:
            (delivered, read) = (summary.everyoneDeliveredSeq ?? 0, summary.everyoneReadSeq ?? 0)
        case .direct:
            guard let other = summary.otherMember(than: me) else { return .sent }
            (delivered, read) = (other.deliveredSeq, other.readSeq)
        }
        if read >= seq { return .read }
        if delivered >= seq { return .delivered }
        return .sent
    }
}
