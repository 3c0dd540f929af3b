import Foundation
import ParleyCore

extension ParleyClient {
    /// Reloads the conversation list (the snapshot) from the server.
    public func reloadConversations() async {
        if conversations.isEmpty { listState = .loading }
        do {
            let list = try await api.conversations(token: session.token)
            // The snapshot's last messages join the timelines, so a message committed just before a
            // first connection (inside the snapshot, before the live head) shows as well.
            store(list.compactMap(\.lastMessage))
            var merged: [ConversationSummary] = []
            for read in list {
                let summary = hidingPreview(read.keepingNewer(of: conversations[read.id]))
                merged.append(summary)
                conversations[summary.id] = summary
                for member in summary.members where member.userId != me.id && summary.kind == .direct {
                    presence[member.userId] = presence[member.userId] ?? Presence(online: member.online ?? false, lastSeenAt: member.lastSeenAt)
                }
            }
            try? store.save(conversations: merged)
            listState = .loaded
            emit(.conversationsChanged)
        } catch {
            if conversations.isEmpty { listState = .failed((error as? ParleyClientError)?.message ?? "Could not load conversations.") }
        }
    }

    // MARK: frames

    func handle(_ frame: ServerFrame) async {
        switch frame {
        case .welcome(_, let head):
            refreshInvitationsSoon()
            if position == nil {  // rule 2: first connection: live from the head, plus a snapshot
                advance(to: head)
                await reloadConversations()
            } else if listState != .loaded {
                // A resumed connection with nothing cached (say, no conversations yet): the list
                // is known only once the server says so.
                await reloadConversations()
            } else {
                await refreshProfiles()  // rule 2: before the replay, which brings everything else
            }
        case .synced:
            setConnectionState(.online)
            flushOutbox()
            flushReceipts()
        case .resync(let head):
            refreshInvitationsSoon()
            try? store.clearSnapshot()
            messages.removeAll()
            hasOlder.removeAll()
            advance(to: head)
            await reloadConversations()
        case .event(let event):
            await apply(event.payload)
            advance(to: event.position)
        case .sent(_, let message, _, let position?):
            // The ack that stands in for this message's event in our own stream.
            await apply(.message(message))
            advance(to: position)
        case .sent(_, let message, _, nil):
            apply(message: message)
        case .acted(let ref, let message, _):
            applyActed(ref: ref, message: message)
        case .error(_, let clientId?, let code, let message):
            refuse(clientId, code: code, message: message)
        case .error(let ref?, nil, let code, let message) where code != .unauthorized && outbox.entries.contains { $0.clientId.rawValue == ref }:
            refuse(ClientMessageID(rawValue: ref), code: code, message: message)  // an action's ref is its client id
        case .typing(let conversation, let user, let isTyping):
            var typists = (typing[conversation] ?? []).filter { $0.user != user && $0.until > Date() }
            if isTyping { typists.append(TypingIndicator(user: user, until: Date().addingTimeInterval(6))) }
            typing[conversation] = typists.isEmpty ? nil : typists
            emit(.typing(conversation, user, isTyping))
        case .presence(let user, let online, let lastSeenAt):
            let state = Presence(online: online, lastSeenAt: lastSeenAt)
            presence[user] = state
            emit(.presence(user, state))
        case .profile(let user):
            apply(profile: user)
        case .error(_, nil, .unauthorized, _):
            // The token was refused at `hello`, or the session was revoked or expired while
            // connected: reconnecting with it cannot work.
            sessionEnded = true
            connection?.abort()
        case .error, .ack, .pong:
            break
        }
    }

    /// ``MessageOutbox`` rules 4, 5 and 12 for a refused send or action.
    private func refuse(_ clientId: ClientMessageID, code: ErrorCode, message: String) {
        let droppedAction = outbox.refuse(clientId, code: code, message: message, now: .now())
        saveOutbox()
        if let droppedAction {
            refusedActions.append(RefusedAction(entry: droppedAction, reason: message))
            refusedActions.removeFirst(max(0, refusedActions.count - Self.maxRefusedActions))
            emit(.actionFailed(droppedAction, message))
        } else if case .failed(let reason)? = outbox.entries.first(where: { $0.clientId == clientId })?.state {
            emit(.sendFailed(clientId, reason))
        }
        scheduleOutboxRetry()
        flushOutbox()
    }

    private func advance(to newPosition: Int64) {
        guard newPosition > (position ?? -1) else { return }
        position = newPosition
        try? store.setPosition(newPosition)
    }

    func apply(_ payload: StreamEvent.Payload) async {
        switch payload {
        case .message(let message):
            if conversations[message.conversationId] == nil,
                let summary = try? await api.conversation(message.conversationId, token: session.token)
            {
                conversations[summary.id] = summary.keepingNewer(of: conversations[summary.id])
            }
            apply(message: message)
        case .receipt(let receipt):
            guard var summary = conversations[receipt.conversationId],
                let index = summary.members.firstIndex(where: { $0.userId == receipt.userId })
            else { return }
            summary.members[index].deliveredSeq = max(summary.members[index].deliveredSeq, receipt.deliveredSeq)
            summary.members[index].readSeq = max(summary.members[index].readSeq, receipt.readSeq)
            conversations[receipt.conversationId] = summary
            if receipt.userId == me.id { recountUnread(receipt.conversationId) }
            try? store.save(conversations: [conversations[receipt.conversationId] ?? summary])
            emit(.receipt(receipt))
        case .conversation(let info):
            if info.kind == .group {
                // Joined (again): the members' roles and cursors come with the group's summary.
                removeInvitation(info.id)
                scheduleRefetch(info.id)
            }
            guard conversations[info.id] == nil else { return }
            let summary = ConversationSummary(
                id: info.id, kind: info.kind, createdAt: info.createdAt, lastSeq: 0, lastMessage: nil, lastActivityAt: info.createdAt,
                unreadCount: 0,
                members: info.members.map {
                    ConversationMember(userId: $0.id, username: $0.username, displayName: $0.displayName, deliveredSeq: 0, readSeq: 0, photo: $0.photo)
                }, title: info.title)
            conversations[info.id] = summary
            try? store.save(conversations: [summary])
            emit(.conversationsChanged)
        case .invitation(let invitation):
            apply(invitation: invitation)
        case .receiptSummary(let aggregate):
            apply(aggregate: aggregate)
        case .messageUpdated(let message):
            apply(updated: message)
        case .messageHidden(let ref):
            apply(hidden: ref)
        }
    }

    /// A message from any source (rule 4); my own confirms its outbox entry.
    func apply(message: Message) {
        guard hiddenSeqs[message.conversationId]?.contains(message.seq) != true else { return }
        let isNew = messages[message.conversationId]?[message.seq] == nil
        store([message])
        if var summary = conversations[message.conversationId] {
            if isNew, message.seq > summary.lastSeq { countUnread(message, in: &summary) }
            if message.seq >= summary.lastSeq {
                summary.lastSeq = message.seq
                summary.lastMessage = message
                summary.lastActivityAt = message.createdAt
            }
            // The protocol's rule: a sender has read what they send (the server moves their cursors
            // without a receipt event), so whoever sent it, their cursors move to it here too.
            if let index = summary.members.firstIndex(where: { $0.userId == message.senderId }) {
                summary.members[index].readSeq = max(summary.members[index].readSeq, message.seq)
                summary.members[index].deliveredSeq = max(summary.members[index].deliveredSeq, message.seq)
            }
            if isNew, message.entry != nil { apply(entry: message, to: &summary) }
            conversations[message.conversationId] = summary
            try? store.save(conversations: [summary])
            if message.senderId == me.id { recountUnread(message.conversationId) }  // my read cursor moved with it
        }
        if message.senderId == me.id {
            if outbox.confirm(message.clientId, seq: message.seq) != nil { saveOutbox() }
            flushOutbox()
        } else {
            typing[message.conversationId]?.removeAll { $0.user == message.senderId }
            // A group I am out of takes no receipts (I still see the entry that ended my membership).
            if conversations[message.conversationId]?.leftSeq == nil {
                deliveredPending[message.conversationId] = max(deliveredPending[message.conversationId] ?? 0, message.seq)
                scheduleDeliveredReceipts()
            }
        }
        if isNew { emit(.message(message)) }
    }
}
