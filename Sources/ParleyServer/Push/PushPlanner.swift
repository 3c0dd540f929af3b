import ParleyCore

/// Decides what one user's new stream events push to their devices (docs/protocol.md
/// "Notifications"). Pure: the dispatcher reads, this decides, the senders send.
///
/// Rules:
/// 1. Only messages from someone else alert, never group entries; and only while the user has no
///    live connection (`online` false) and the conversation's setting lets the message notify
///    (level, mention, mute at `now`).
/// 2. A conversation's alerting messages collapse into one `message` push: the newest, with how
///    many there were. A message read, or deleted for everyone, before the push leaves the count,
///    and the newest left is the push.
/// 3. An edit of the message a notification shows is an `update` (no alert); a delete for
///    everyone of it, a `withdraw`; the user reading past it elsewhere (or writing there), a
///    `read`. These tidy up whatever the user's presence: they go to every device.
/// 4. An invitation to a group alerts, titled with the group.
/// 5. Wording follows the user's preview: full (title, text), sender (who, not what), none
///    ("Parley", "New message"). Texts are cut to ``maxTextCharacters``.
struct PushPlanner {
    struct Plan: Equatable {
        var pushes: [PushPayload]
        /// Each conversation whose shown message changes: the seq it shows now, or nil for none.
        var notified: [ConversationID: Int64?]
    }

    static let maxTextCharacters = 180

    var user: UserID
    var settings: [ConversationID: ConversationNotificationSetting]
    var preview: NotificationPreview
    var online: Bool
    var now: Timestamp
    /// The conversation's notification shows this seq now (from earlier pushes).
    var notified: [ConversationID: Int64]

    /// What each touched conversation ends up with, in order of first appearance.
    fileprivate struct Outcome {
        /// The messages that alert, oldest first: the newest is the push; a deleted one leaves.
        var alerting: [Message] = []
        var newest: Message? { alerting.last }
        var count: Int { alerting.count }
        var edited: Message?
        var withdrawn: Int64?
        var readSeq: Int64?
        var invitation: Invitation?
    }

    /// The pushes for `events`; `name` and `title` word them (a sender's display name, a group's title).
    func plan(_ events: [StreamEvent], name: (UserID) -> String, title: (ConversationID) -> String?, badge: Int) -> Plan {
        var order: [ConversationID] = []
        var outcomes: [ConversationID: Outcome] = [:]
        func touch(_ id: ConversationID, _ change: (inout Outcome) -> Void) {
            if outcomes[id] == nil { order.append(id) }
            change(&outcomes[id, default: Outcome()])
        }
        for event in events {
            switch event.payload {
            case .message(let message) where message.senderId == user:
                touch(message.conversationId) { $0.read(upTo: message.seq) }
            case .message(let message) where message.entry == nil && !online && alerts(message):
                touch(message.conversationId) { $0.alerting.append(message) }
            case .messageUpdated(let message):
                touch(message.conversationId) { outcome in
                    if let index = outcome.alerting.firstIndex(where: { $0.seq == message.seq }) {
                        if message.deletedAt == nil { outcome.alerting[index] = message } else { outcome.alerting.remove(at: index) }
                    } else if message.deletedAt != nil {
                        outcome.withdrawn = message.seq
                    } else {
                        outcome.edited = message
                    }
                }
            case .receipt(let receipt) where receipt.userId == user:
                touch(receipt.conversationId) { $0.read(upTo: receipt.readSeq) }
            case .invitation(let invitation) where !online:
                touch(invitation.conversationId) { $0.invitation = invitation }
            default:
                break
            }
        }
        var plan = Plan(pushes: [], notified: [:])
        for id in order {
            guard let outcome = outcomes[id] else { continue }
            let shown = notified[id]  // each conversation is planned once
            let url = "/#/c/\(id.rawValue)"
            if let message = outcome.newest {
                let (heading, body) = wording(message, title: title(id), name: name)
                plan.pushes.append(
                    PushPayload(kind: .message, conversationId: id, seq: message.seq, title: heading, body: body, count: outcome.count, badge: badge, url: url))
                plan.notified[id] = message.seq
            } else if let invitation = outcome.invitation {
                let heading = preview == .none ? "Parley" : invitation.title
                let body = preview == .none ? "New message" : "\(invitation.inviter.displayName) invited you"
                plan.pushes.append(PushPayload(kind: .message, conversationId: id, seq: 0, title: heading, body: body, badge: badge, url: url))
            } else if let shown {
                if let read = outcome.readSeq, read >= shown {
                    plan.pushes.append(PushPayload(kind: .read, conversationId: id, seq: read, title: "", body: "", badge: badge, url: url))
                    plan.notified[id] = .some(nil)
                } else if outcome.withdrawn == shown {
                    plan.pushes.append(PushPayload(kind: .withdraw, conversationId: id, seq: shown, title: "", body: "", badge: badge, url: url))
                    plan.notified[id] = .some(nil)
                } else if let edited = outcome.edited, edited.seq == shown {
                    let (heading, body) = wording(edited, title: title(id), name: name)
                    plan.pushes.append(PushPayload(kind: .update, conversationId: id, seq: shown, title: heading, body: body, badge: badge, url: url))
                }
            }
        }
        return plan
    }

    /// Rule 1's setting check.
    private func alerts(_ message: Message) -> Bool {
        let setting = settings[message.conversationId] ?? ConversationNotificationSetting(conversationId: message.conversationId)
        return setting.notifies(mentioning: message.mentions?.contains(user) ?? false, at: now)
    }

    /// The text a notification shows: a message's files say what they are ("📷 Photo", "📎 notes.pdf"),
    /// before the caption when there is one.
    static func shownText(_ message: Message) -> String {
        let text = Validation.overridesNeutralized(message.text)  // a notification reorders nothing
        guard let first = message.attachments?.first else { return text }
        let count = message.attachments?.count ?? 1
        let label: String =
            switch first.kind {
            case .image: count > 1 ? "📷 \(count) photos" : "📷 Photo"
            case .video: "🎥 Video"
            case .audio: "🎵 Audio"
            case .file: count > 1 ? "📎 \(count) files" : "📎 \(first.name)"
            }
        return text.isEmpty ? label : "\(label): \(text)"
    }

    /// Rule 5.
    private func wording(_ message: Message, title groupTitle: String?, name: (UserID) -> String) -> (String, String) {
        let sender = name(message.senderId)
        let body = Self.shownText(message)
        let text = body.count > Self.maxTextCharacters ? body.prefix(Self.maxTextCharacters - 1) + "…" : body
        switch (preview, groupTitle) {
        case (.none, _): return ("Parley", "New message")
        case (.sender, nil): return (sender, "New message")
        case (.sender, let group?): return (group, "New message from \(sender)")
        case (.full, nil): return (sender, text)
        case (.full, let group?): return (group, "\(sender): \(text)")
        }
    }
}

extension PushPlanner.Outcome {
    /// Reading (or writing) up to `seq` takes back what the user has now seen.
    fileprivate mutating func read(upTo seq: Int64) {
        readSeq = max(readSeq ?? 0, seq)
        alerting.removeAll { $0.seq <= seq }
    }
}
