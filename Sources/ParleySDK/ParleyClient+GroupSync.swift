import Foundation
import ParleyCore

/// How the stream's group events change what the client holds (docs/protocol.md "Groups").
///
/// Rules:
/// 1. A membership entry is stored like any message and changes the summary at once where it
///    can (the title of a rename, `leftSeq` when it ends my membership, a departed member gone);
///    then the group is read again (`GET /v1/conversations/{id}`, several entries in a row cost one
///    read) for its members, roles, title and `leftSeq`.
/// 2. `receiptSummary` keeps the furthest `everyoneDeliveredSeq` / `everyoneReadSeq` seen.
/// 3. `invitation` adds to ``ParleyClient/invitations`` unless I am already in that group; the list is
///    read again on every connection (invitations answered on another device disappear).
/// 4. Unread (in a group, and in a direct conversation too): entries, my own messages and deleted or hidden ones never
///    count, so the server's count is kept rather than last seq − my read seq. A new message of someone else
///    after my read cursor adds one (and one mention if it names me); when my cursor moves the
///    count is made again from the messages held, or read from the server if some are missing.
extension ParleyClient {
    /// Rule 4, for a message newer than anything the summary had.
    func countUnread(_ message: Message, in summary: inout ConversationSummary) {
        guard message.entry == nil, message.senderId != me.id, !message.isDeleted else { return }
        let readSeq = summary.members.first { $0.userId == me.id }?.readSeq ?? 0
        guard message.seq > readSeq else { return }
        summary.unreadCount = max(0, summary.unreadCount) + 1
        if message.mentions?.contains(me.id) == true { summary.mentionCount = (summary.mentionCount ?? 0) + 1 }
    }

    /// Rule 4, after my read cursor moved.
    func recountUnread(_ id: ConversationID) {
        guard var summary = conversations[id], let mine = summary.members.first(where: { $0.userId == me.id }) else { return }
        var unread: Int64 = 0
        var mentions: Int64 = 0
        if mine.readSeq < summary.lastSeq {
            for seq in (mine.readSeq + 1)...summary.lastSeq where hiddenSeqs[id]?.contains(seq) != true {
                guard let message = messages[id]?[seq] else {
                    scheduleRefetch(id)  // not all held: the server counts
                    return
                }
                guard message.entry == nil, message.senderId != me.id, !message.isDeleted else { continue }
                unread += 1
                if message.mentions?.contains(me.id) == true { mentions += 1 }
            }
        }
        // Most calls (each message I send) change nothing: no write to the local store then.
        guard summary.unreadCount != unread || (summary.mentionCount ?? 0) != mentions else { return }
        summary.unreadCount = unread
        summary.mentionCount = mentions
        conversations[id] = summary
        try? store.save(conversations: [summary])
    }

    /// Rule 1, what changes at once.
    func apply(entry message: Message, to summary: inout ConversationSummary) {
        guard let entry = message.entry else { return }
        remember(summary.members)
        let names = entry.userIds ?? []
        let endsMine = (entry.type == .removed && names.contains(me.id)) || (entry.type == .left && message.senderId == me.id)
        if endsMine {
            summary.leftSeq = max(summary.leftSeq ?? 0, message.seq)
            summary.members = []
            typing[summary.id] = nil
        } else if let left = summary.leftSeq, message.seq > left {
            summary.leftSeq = nil  // in again: a new span
        }
        // In (again): a member from this entry on, before the read that follows brings the list, so a
        // message arriving meanwhile can be marked read (my cursors start before the entry, as the server's).
        let joinsMe = ([.added, .created].contains(entry.type) && names.contains(me.id)) || (entry.type == .joined && message.senderId == me.id)
        if joinsMe, !summary.members.contains(where: { $0.userId == me.id }) {
            summary.members.append(
                ConversationMember(
                    userId: me.id, username: me.username, displayName: me.displayName, deliveredSeq: message.seq - 1, readSeq: message.seq - 1,
                    role: .member, photo: me.photo))
        }
        if let title = entry.title, entry.type == .renamed || entry.type == .created, message.seq >= summary.lastSeq { summary.title = title }
        if entry.type == .left { summary.members.removeAll { $0.userId == message.senderId } }
        if entry.type == .removed { summary.members.removeAll { names.contains($0.userId) } }
        scheduleRefetch(summary.id)
        emit(.conversationsChanged)
    }

    /// Rule 1, the read: debounced per group.
    func scheduleRefetch(_ id: ConversationID) {
        refetches[id]?.cancel()
        refetches[id] = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(100))
            guard !Task.isCancelled, let self else { return }
            self.refetches[id] = nil
            guard let read = try? await self.api.conversation(id, token: self.session.token) else { return }
            self.adopt(read)
        }
    }

    /// Reads one conversation again now (say, before showing a group's members) and applies it.
    public func refresh(_ id: ConversationID) async throws {
        adopt(try await api.conversation(id, token: session.token))
    }

    /// A summary read from the server joins what the client holds (the furthest of each cursor).
    func adopt(_ read: ConversationSummary) {
        remember(conversations[read.id]?.members ?? [])
        let summary = hidingPreview(read.keepingNewer(of: conversations[read.id]))
        conversations[summary.id] = summary
        try? store.save(conversations: [summary])
        if summary.leftSeq == nil { removeInvitation(summary.id) }
        emit(.conversationsChanged)
    }

    /// Keeps the names of members about to disappear from a summary (a departure, or mine).
    private func remember(_ members: [ConversationMember]) {
        for member in members where formerNames[member.userId] != member.displayName { formerNames[member.userId] = member.displayName }
    }

    /// Rule 2.
    func apply(aggregate: ReceiptSummary) {
        guard var summary = conversations[aggregate.conversationId] else { return }
        summary.everyoneDeliveredSeq = max(summary.everyoneDeliveredSeq ?? 0, aggregate.everyoneDeliveredSeq)
        summary.everyoneReadSeq = max(summary.everyoneReadSeq ?? 0, aggregate.everyoneReadSeq)
        conversations[aggregate.conversationId] = summary
        try? store.save(conversations: [summary])
        emit(.groupReceipts(aggregate))
    }

    /// Rule 3, one from the stream.
    func apply(invitation: Invitation) {
        users[invitation.inviter.id] = invitation.inviter
        invitationsDuringRefresh?.append(invitation)
        if let known = conversations[invitation.conversationId], known.leftSeq == nil { return }
        setInvitations(invitations.filter { $0.conversationId != invitation.conversationId } + [invitation])
        emit(.invitation(invitation))
    }

    /// Rule 3, the list read again (without waiting for it).
    func refreshInvitationsSoon() {
        Task { [weak self] in await self?.refreshInvitations() }
    }

    /// Reads the pending invitations from the server (those that came on the stream meanwhile stay).
    public func refreshInvitations() async {
        invitationsDuringRefresh = invitationsDuringRefresh ?? []
        guard let read = try? await api.invitations(token: session.token) else {
            invitationsDuringRefresh = nil
            return
        }
        let arrived = invitationsDuringRefresh ?? []
        invitationsDuringRefresh = nil
        for invitation in read { users[invitation.inviter.id] = invitation.inviter }
        let merged = read + arrived.filter { new in !read.contains { $0.conversationId == new.conversationId } }
        setInvitations(merged.filter { conversations[$0.conversationId].map { $0.leftSeq != nil } ?? true })
    }

    func removeInvitation(_ id: ConversationID) {
        guard invitations.contains(where: { $0.conversationId == id }) else { return }
        setInvitations(invitations.filter { $0.conversationId != id })
    }

    private func setInvitations(_ list: [Invitation]) {
        let sorted = list.sorted { ($0.createdAt.milliseconds, $0.conversationId.rawValue) > ($1.createdAt.milliseconds, $1.conversationId.rawValue) }
        guard sorted != invitations else { return }
        invitations = sorted
        try? store.save(invitations: sorted)
        emit(.conversationsChanged)
    }
}
