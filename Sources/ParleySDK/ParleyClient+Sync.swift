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
                let summary = read.keepingNewer(of: conversations[read.id])
                merged.append(summary)
                conversations[summary.id] = summary
                for member in summary.members where member.userId != me.id {
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
            if position == nil {  // rule 2: first connection: live from the head, plus a snapshot
                advance(to: head)
                await reloadConversations()
            } else if listState != .loaded {
                // A resumed connection with nothing cached (say, no conversations yet): the list
                // is known only once the server says so.
                await reloadConversations()
            }
        case .synced:
            setConnectionState(.online)
            flushOutbox()
            flushReceipts()
        case .resync(let head):
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
        case .error(_, let clientId?, let code, let message):
            outbox.refuse(clientId, code: code, message: message, now: .now())
            saveOutbox()
            if case .failed(let reason)? = outbox.entries.first(where: { $0.clientId == clientId })?.state {
                emit(.sendFailed(clientId, reason))
            }
            scheduleOutboxRetry()
            flushOutbox()
        case .typing(let conversation, let user, let isTyping):
            if isTyping { typing[conversation] = TypingIndicator(user: user, until: Date().addingTimeInterval(6)) } else { typing[conversation] = nil }
            emit(.typing(conversation, user, isTyping))
        case .presence(let user, let online, let lastSeenAt):
            let state = Presence(online: online, lastSeenAt: lastSeenAt)
            presence[user] = state
            emit(.presence(user, state))
        case .error(_, nil, .unauthorized, _):
            // The token was refused at `hello`, or the session was revoked or expired while
            // connected: reconnecting with it cannot work.
            sessionEnded = true
            connection?.abort()
        case .error, .ack, .pong:
            break
        }
    }

    private func advance(to newPosition: Int64) {
        guard newPosition > (position ?? -1) else { return }
        position = newPosition
        try? store.setPosition(newPosition)
    }

    private func apply(_ payload: StreamEvent.Payload) async {
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
            try? store.save(conversations: [summary])
            emit(.receipt(receipt))
        case .conversation(let info):
            guard conversations[info.id] == nil else { return }
            let summary = ConversationSummary(
                id: info.id, kind: info.kind, createdAt: info.createdAt, lastSeq: 0, lastMessage: nil, lastActivityAt: info.createdAt,
                unreadCount: 0,
                members: info.members.map {
                    ConversationMember(userId: $0.id, username: $0.username, displayName: $0.displayName, deliveredSeq: 0, readSeq: 0)
                })
            conversations[info.id] = summary
            try? store.save(conversations: [summary])
            emit(.conversationsChanged)
        case .invitation, .receiptSummary:
            break
        }
    }

    /// A message from any source (rule 4); my own confirms its outbox entry.
    func apply(message: Message) {
        let isNew = messages[message.conversationId]?[message.seq] == nil
        store([message])
        if var summary = conversations[message.conversationId] {
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
            conversations[message.conversationId] = summary
            try? store.save(conversations: [summary])
        }
        if message.senderId == me.id {
            if outbox.confirm(message.clientId) != nil { saveOutbox() }
            flushOutbox()
        } else {
            typing[message.conversationId] = nil
            deliveredPending[message.conversationId] = max(deliveredPending[message.conversationId] ?? 0, message.seq)
            scheduleDeliveredReceipts()
        }
        if isNew { emit(.message(message)) }
    }

    // MARK: sending

    /// Sends what the outbox allows now (rule 2 of ``MessageOutbox``).
    func flushOutbox() {
        guard connectionState == .online, connection != nil else { return }
        for entry in outbox.takeSendable(now: .now()) {
            let useRecipient = entry.recipientId != nil && conversations[entry.conversationId] == nil
            sendExpectingAnswer(
                .send(
                    SendRequest(
                        clientId: entry.clientId, conversationId: useRecipient ? nil : entry.conversationId,
                        recipientId: useRecipient ? entry.recipientId : nil, text: entry.text)))
        }
    }

    /// Wakes the outbox when its next held-back message may go.
    func scheduleOutboxRetry() {
        guard let next = outbox.nextRetry else { return }
        retryTimer?.cancel()
        let delay = max(0, Double(next.milliseconds - Timestamp.now().milliseconds) / 1000)
        retryTimer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int64(delay * 1000) + 10))
            guard !Task.isCancelled else { return }
            self?.flushOutbox()
        }
    }

    /// Rule 5: delivered receipts are batched briefly, then sent with the read ones.
    func scheduleDeliveredReceipts() {
        guard deliveredTimer == nil else { return }
        deliveredTimer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(50))
            self?.deliveredTimer = nil
            self?.flushReceipts()
        }
    }

    func flushReceipts() {
        guard connectionState == .online, let connection else { return }
        for id in Set(deliveredPending.keys).union(readPending.keys) {
            connection.send(.receipt(ref: nil, conversationId: id, deliveredSeq: deliveredPending[id], readSeq: readPending[id]))
        }
        deliveredPending.removeAll()
        readPending.removeAll()
    }
}
