import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels

/// How chats look in the terminal.
@MainActor
struct ChatPrinter {
    let client: ParleyClient
    let formatter = SmartDateFormatter()

    func line(for row: ConversationListViewModel.Row, number: Int) -> String {
        var line = "\(number). \(row.title)"
        if row.isGroup { line += row.hasLeft ? " [group, left]" : " [group]" }
        if row.isOnline { line += " ●" }
        if row.isMuted { line += " [muted]" }
        if row.unreadCount > 0 { line += " (\(row.unreadCount) unread\(row.mentionCount > 0 ? ", @\(row.mentionCount)" : ""))" }
        if row.notSentCount > 0 { line += " (! \(row.notSentCount) not sent)" }
        if !row.preview.isEmpty { line += " — \(row.preview)\(row.isLastMessageEdited ? " (edited)" : "")" }
        return line + " · \(row.timestamp)"
    }

    /// A message as "[3] 12:01 Ada Lovelace: text (edited) ✓ [👍 2 · ❤️ 1]" (the number, when
    /// given, is what `/reply`, `/react`, `/edit` and `/delete` take), with "  ↪ Grace Hopper: the
    /// original's first line" above a reply; a deleted one as "This message was deleted"; an entry as
    /// one line per sentence: "12:01 · Ada added Grace".
    func lines(for item: TimelineItem, in conversation: ConversationID, number: Int? = nil) -> [String] {
        let time = formatter.time(item.createdAt.date)
        if let entry = item.entry {
            return GroupText.entryLines(entry, by: item.senderId, me: client.me.id) { name(of: $0, in: conversation) }.map { "\(time) · \($0)" }
        }
        let sender = item.senderId == client.me.id ? "You" : name(of: item.senderId, in: conversation)
        var line = (number.map { "[\($0)] " } ?? "") + "\(time) \(sender): "
        line += item.isDeleted ? MessageText.deleted : item.text
        if !item.isDeleted, !(item.attachments.isEmpty && item.pendingFiles.isEmpty) {
            line += (item.text.isEmpty ? "" : " ") + Self.fileTags(item)
        }
        if item.isEdited && !item.isDeleted { line += " (\(MessageText.edited))" }
        if let status = item.status { line += " " + Self.mark(status, retryable: canRetry(in: conversation), number: number) }
        if !item.reactions.isEmpty { line += " [" + item.reactions.map { "\($0.emoji) \($0.count)" }.joined(separator: " · ") + "]" }
        guard let quote = item.replyTo else { return [line] }
        let quoted =
            quote.deleted
            ? MessageText.deletedQuote
            : "\(name(of: quote.senderId, in: conversation)): \(quote.hidden == true ? MessageText.hiddenQuote : MessageText.firstLine(quote.preview))"
        return ["  ↪ " + quoted, line]
    }

    /// "You" for me; anyone else by display name, with their username added to a name that reads
    /// like another member's (``ParleyClient/distinguishableName(of:in:)``) or reads "You"
    /// (``Validation/isReservedName(_:)``: a server that let one through cannot make another's
    /// lines pass for mine).
    func name(of user: UserID, in conversation: ConversationID) -> String {
        if user == client.me.id { return "You" }
        return othersName(client.distinguishableName(of: user, in: conversation) ?? GroupText.someone, user, in: conversation)
    }

    func othersName(_ name: String, _ user: UserID, in conversation: ConversationID) -> String {
        guard Validation.isReservedName(name) else { return name }
        let member = client.conversations.values.lazy.compactMap { $0.members.first { $0.userId == user } }.first
        return "\(name) (@\(member?.username ?? "someone else"))"
    }

    /// One line for news from a chat that is not open: "• New message from Ada: hi", "• Ada in Trip: hi".
    /// None for a message deleted before it came (one written and deleted while I was away).
    func notice(for message: Message) -> String? {
        guard !message.isDeleted, let summary = client.conversations[message.conversationId] else { return nil }
        guard summary.kind == .group else {
            let other = client.otherMember(of: summary)
            return "• New message from \(other.map { name(of: $0.userId, in: summary.id) } ?? "someone"): \(Self.shown(message))"
        }
        let title = summary.title ?? "a group"
        if let entry = message.entry {
            let line = GroupText.entryLines(entry, by: message.senderId, me: client.me.id) { name(of: $0, in: summary.id) }.first ?? ""
            return "• \(title): \(line)"
        }
        return "• \(name(of: message.senderId, in: summary.id)) in \(title): \(Self.shown(message))"
    }

    /// A message's text in a notice, its files named when it has some ("📎 report.pdf").
    static func shown(_ message: Message) -> String {
        guard let attachments = message.attachments, !attachments.isEmpty else { return message.text }
        return MessageText.preview(message.text, attachments: attachments)
    }

    /// Whether a failed message of `conversation` could go again: not once I am out of the group.
    func canRetry(in conversation: ConversationID) -> Bool { client.conversations[conversation]?.leftSeq == nil }

    /// A status as a mark; a failed one says what can be done: `/retry`, or (out of the group, where
    /// a retry could only be refused again) `/delete N me`, with its number when it has one.
    static func mark(_ status: MessageStatus, retryable: Bool = true, number: Int? = nil) -> String {
        switch status {
        case .sending: "(sending)"
        case .sent: "✓"
        case .delivered: "✓✓"
        case .read: "✓✓ read"
        case .failed(let reason): "! failed: \(reason) — \(retryable ? "/retry" : "/delete \(number.map(String.init) ?? "N") me")"
        }
    }

    /// Finds a user by exact username.
    func user(named username: String) async throws -> User {
        let wanted = username.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "@ "))
        // Search leaves me out, which would read "No user named …".
        if wanted == client.me.username { throw ChatFailure("@\(wanted) is you: name someone else.") }
        guard let user = try await client.searchUsers(wanted).first(where: { $0.username == wanted }) else {
            throw ChatFailure("No user named '\(wanted)'.")
        }
        return user
    }
}
