import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels

/// What the interactive client prints as things happen: messages, changed messages, typing,
/// presence, invitations, the connection, and my messages' status marks.
extension TerminalChat {
    func show(_ event: ClientEvent) async {
        if opening, let about = event.conversation, about == chat?.conversation { return }
        switch event {
        case .connection(.online):
            if shownOnline != true { say("[online]") }
            shownOnline = true
        case .connection(.offline):
            if shownOnline != false { say("[offline — messages wait in the outbox; reconnecting]") }
            shownOnline = false
        case .connection(.connecting): break
        case .connection(.unauthorized):
            say("[signed out: the session was ended elsewhere or expired — sign in again with `parley chat login`]")
            shownOnline = false
        case .conversationsChanged: if chat == nil, searchHits.isEmpty { await showList(onlyIfChanged: true) }  // not under search results
        case .message(let message):
            typingShown[message.conversationId.rawValue + "/" + message.senderId.rawValue] = nil  // typing again is news
            if message.conversationId.isGroup { await client.resolveNames(in: [message]) }  // "Grace joined", not "Someone joined"
            if message.conversationId == chat?.conversation {
                // Others' messages, and mine written on another device (this one printed its own).
                if message.senderId != client.me.id || printedStatus[message.clientId] == nil {
                    printItem(client.timeline(message.conversationId).first { $0.id == message.clientId } ?? TimelineItem(message))
                }
                markRead()
            } else if message.senderId != client.me.id {
                printer.notice(for: message).map(say)
            }
        case .messageUpdated(let message):
            guard message.conversationId == chat?.conversation else { break }
            reprintChangedMessages()
        case .messageHidden(let ref):
            guard ref.conversationId == chat?.conversation else { break }
            reprintChangedMessages()
        case .actionFailed(let entry, let reason):
            say("Not done: \(failedAction(entry)): \(reason)")
            reprintChangedMessages()
        case .typing(let conversation, let user, let isTyping):
            let key = conversation.rawValue + "/" + user.rawValue, now = ContinuousClock.now
            if conversation == chat?.conversation, isTyping, let chat, typingShown[key].map({ now - $0 >= Self.typingRepeat }) ?? true {
                typingShown[key] = now
                say("… " + (chat.isGroup ? chat.typingText : "\(chat.title) is typing"))
            }
        case .invitation(let invitation):
            let inviter = "\(invitation.inviter.displayName) (@\(invitation.inviter.username))"  // a stranger may take anyone's name
            say("• \(inviter) invited you to “\(invitation.title)” — /invites, then /accept N or /decline N")
        case .profile(let user) where user.id == client.me.id:
            try? storage.save(client.session)  // renamed here or on another device: a restart shows it
        case .groupReceipts, .profile:
            break  // printStatusChanges() below shows what receipts changed; a terminal shows no photos
        case .presence(let user, let presence):
            guard let chat, !chat.isGroup, let summary = client.conversations[chat.conversation], client.otherMember(of: summary)?.userId == user
            else { break }
            say(presence.online ? "● \(chat.title) is online" : "○ \(chat.title) was \(SmartDateFormatter().lastSeen(presence.lastSeenAt?.date))")
        case .receipt:
            break
        case .sendFailed:
            break
        }
        printStatusChanges()
    }

    /// Prints my messages whose status changed: "[2] ✓", ✓✓, read, or failed, with the number that
    /// `/edit`, `/delete` and the other message commands take.
    func printStatusChanges() {
        guard let chat, !opening else { return }
        for item in client.timeline(chat.conversation) where item.senderId == client.me.id && item.entry == nil && !item.isDeleted {
            guard let status = item.status, printedStatus[item.id] != status else { continue }
            printedStatus[item.id] = status
            let number = numbers.number(for: item.id)
            if numbers.printed[item.id] == nil { numbers.printed[item.id] = withoutStatus(item, number: number) }
            // A message of files only is said by their names ("" would say nothing).
            let names = (item.attachments.map(\.name) + item.pendingFiles.map(\.name)).joined(separator: ", ")
            let what = item.text.isEmpty && !names.isEmpty ? names : "\"\(item.text.prefix(40))\""
            say("  [\(number)] \(ChatPrinter.mark(status, retryable: printer.canRetry(in: chat.conversation), number: number)) \(what)")
        }
    }

    /// What a failed action was, as the user made it: "your edit of “see you at 5” in Trip".
    func failedAction(_ entry: OutboxEntry) -> String {
        guard let action = entry.action else { return "your message" }
        let what =
            switch action.kind {
            case .react: action.emoji == nil ? "clearing your reaction to" : "your \(action.emoji ?? "") on"
            case .edit: "your edit of"
            case .delete: "deleting for everyone"
            case .hide: "deleting for you"
            }
        let item = client.timeline(entry.conversationId).first { item in
            switch action.target {
            case .seq(let seq): item.seq == seq
            case .pending(let clientId): item.id == clientId
            }
        }
        let text = item.map { "“\($0.isDeleted ? MessageText.deleted : String(MessageText.firstLine($0.text).prefix(40)))”" } ?? "a message"
        let chat = client.title(of: entry.conversationId).map { " in \($0)" } ?? ""
        return "\(what) \(text)\(chat)"
    }

    func markRead() {
        guard let chat, let last = client.timeline(chat.conversation).last(where: { $0.senderId != client.me.id })?.seq else { return }
        chat.markVisible(upTo: last)
    }
}

extension ClientEvent {
    /// The conversation a message, a change or typing is about (a failed action is said whatever
    /// is open).
    var conversation: ConversationID? {
        switch self {
        case .message(let message), .messageUpdated(let message): message.conversationId
        case .messageHidden(let ref): ref.conversationId
        case .typing(let conversation, _, _): conversation
        default: nil
        }
    }
}
