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
    /// A receipt cursor beyond the conversation's last message.
    case cursorBeyondEnd
    /// The database cannot write (disk full, I/O error). Nothing of the failed write was kept;
    /// retrying later is safe, and the store recovers by itself when the cause goes away.
    case storageUnavailable
}
