import ParleyCore

/// Where one of my messages is: sending (clock) → sent (✓) → delivered (✓✓) → read (blue ✓✓), or failed (!).
public enum MessageStatus: Hashable, Sendable {
    case sending
    case sent
    case delivered
    case read
    case failed(reason: String)
}

/// One message of a chat as shown: confirmed ones in seq order, then my pending ones in the order
/// written; each as it is now, with my actions still in the outbox already applied (an edit shows its
/// new text, a delete the tombstone, a reaction its chip).
public struct TimelineItem: Hashable, Sendable, Identifiable {
    /// The client id: stable from the moment the message is written until it is confirmed and after.
    public var id: ClientMessageID
    /// The conversation it belongs to.
    public var conversationId: ConversationID
    /// The server's seq once confirmed; `nil` while pending.
    public var seq: Int64?
    /// Who wrote it.
    public var senderId: UserID
    /// The message.
    public var text: String
    /// When it was written (the server's time once confirmed).
    public var createdAt: Timestamp
    /// For my messages; `nil` for theirs and for membership entries.
    public var status: MessageStatus?
    /// Set for a group's membership entry ("Ada added Grace"): a line of its own, not a bubble.
    /// Its sender is who acted; its `text` is empty.
    public var entry: GroupEntry?
    /// Group members the message mentions (`@username`).
    public var mentions: [UserID]
    /// The message it answers, as that message is now (its first line, or deleted); its `seq` is 0
    /// while that message is itself still in my outbox.
    public var replyTo: ReplyQuote?
    /// When its text was last edited (shown as "edited").
    public var editedAt: Timestamp?
    /// When it was deleted for everyone: a tombstone, whose `text` is empty.
    public var deletedAt: Timestamp?
    /// Its reactions, by emoji in order of each one's first reaction.
    public var reactions: [Reaction]
    /// Its photos and files (``ParleyClient/save(_:into:)`` downloads one).
    public var attachments: [Attachment] = []
    /// While it is pending: the files it carries, as they are uploaded (``ParleyClient/uploadProgress(of:)``).
    public var pendingFiles: [PendingAttachment] = []

    /// Whether it was deleted for everyone.
    public var isDeleted: Bool { deletedAt != nil }
    /// Whether its text was edited.
    public var isEdited: Bool { editedAt != nil }

    /// A confirmed message as shown, without a status.
    public init(_ message: Message) {
        self.init(
            id: message.clientId, conversationId: message.conversationId, seq: message.seq, senderId: message.senderId, text: message.text,
            createdAt: message.createdAt, status: nil, entry: message.entry, mentions: message.mentions ?? [])
        replyTo = message.replyTo
        editedAt = message.editedAt
        deletedAt = message.deletedAt
        reactions = message.reactions ?? []
        attachments = message.attachments ?? []
    }

    init(
        id: ClientMessageID, conversationId: ConversationID, seq: Int64?, senderId: UserID, text: String, createdAt: Timestamp,
        status: MessageStatus?, entry: GroupEntry? = nil, mentions: [UserID] = []
    ) {
        self.id = id
        self.conversationId = conversationId
        self.replyTo = nil
        self.editedAt = nil
        self.deletedAt = nil
        self.reactions = []
        self.seq = seq
        self.senderId = senderId
        self.text = text
        self.createdAt = createdAt
        self.status = status
        self.entry = entry
        self.mentions = mentions
    }
}

/// Something that happened, for interfaces that print rather than observe (the terminal client, tests).
public enum ClientEvent: Sendable, Equatable {
    case connection(ParleyClient.ConnectionState)
    case message(Message)
    case typing(ConversationID, UserID, Bool)
    case presence(UserID, ParleyClient.Presence)
    case receipt(ReceiptUpdate)
    case sendFailed(ClientMessageID, String)
    /// A message changed (a reaction, an edit, a delete for everyone): it as it is now.
    case messageUpdated(Message)
    /// A message was deleted for me (on this device or another of mine): it is gone from the timeline.
    case messageHidden(MessageRef)
    /// The server refused one of my actions (not mine to edit, the window closed, deleted meanwhile…):
    /// it was dropped from the outbox; the reason is the server's.
    case actionFailed(OutboxEntry, String)
    /// The list changed: a conversation appeared, a group's members, title or membership changed,
    /// or the invitations changed.
    case conversationsChanged
    /// Someone invited me to a group (also in ``ParleyClient/invitations``).
    case invitation(Invitation)
    /// A group's receipt aggregate moved: my messages there may be delivered or read now.
    case groupReceipts(ReceiptSummary)
    /// Someone I share a conversation with (or I, on another device) changed their profile photo:
    /// the user as now, already applied to every member list, ``ParleyClient/users`` and ``ParleyClient/me``.
    case profile(User)
}
