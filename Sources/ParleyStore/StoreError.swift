import ParleyCore

/// Failures a store reports for requests that break a rule; anything else it throws is an outage.
public enum StoreError: Error, Equatable, Sendable {
    case usernameTaken
    case userNotFound
    /// The conversation does not exist or the caller is not a member: the two are not told apart,
    /// so nobody learns whom other people talk to.
    case conversationNotFound
    /// A direct message to oneself, or to an id that is not a user.
    case invalidRecipient
    /// The client id was already used by this sender for a message in another conversation.
    case clientIdConflict
    /// The caller left or was removed from the group: told as ``conversationNotFound`` is (a 404),
    /// with why, since they saw that entry and learn nothing new (only `hide` is left to them).
    case noLongerMember
    /// A receipt cursor beyond the conversation's last message.
    case cursorBeyondEnd
    /// A group action the caller's role does not allow (the reason is safe to show).
    case forbidden(String)
    /// A create or add names someone who cannot be added (unknown, a duplicate, oneself, already in).
    case invalidMembers(String)
    /// A role change to anything but admin or member.
    case invalidRole
    /// The group would have more members than the server allows.
    case groupFull(limit: Int)
    /// The person acted on is not a member of the group.
    case memberNotFound
    /// No message with that seq is visible to the caller.
    case messageNotFound
    /// No pending invitation of the caller to that group.
    case invitationNotFound
    /// The message was deleted for everyone: it cannot be edited or reacted to.
    case messageDeleted
    /// The action does not apply to that message (a membership entry).
    case invalidAction
    /// The sender's edit window for the message has passed.
    case editWindowClosed
    /// The sender's delete window for the message has passed.
    case deleteWindowClosed
    /// An attachment is not a complete upload of the sender's that no message carries yet.
    case invalidAttachment
    /// No upload with that id belongs to the caller (or it expired).
    case uploadNotFound
    /// The upload is carried by a message or is a profile photo: it goes with them, not by itself.
    case uploadAttached
    /// The user's stored uploads would pass their quota.
    case quotaExceeded(limit: Int64)
    /// The database cannot write (disk full, I/O error). Nothing of the failed write was kept;
    /// retrying later is safe, and the store recovers by itself when the cause goes away.
    case storageUnavailable
}
