import ParleyCore

/// Accounts and sessions.
public protocol AccountStore: Sendable {
    /// - Throws: ``StoreError/usernameTaken``.
    func createUser(_ user: NewUser, now: Timestamp) async throws -> User
    func user(_ id: UserID) async throws -> User?
    func users(_ ids: [UserID]) async throws -> [User]
    func credentials(username: String) async throws -> Credentials?
    /// Users whose username, display name, or a word of the display name starts with `prefix`
    /// (case-insensitive), other than `excluding`, by username.
    func searchUsers(prefix: String, excluding: UserID, limit: Int) async throws -> [User]
    func createSession(tokenHash: String, user: UserID, expiresAt: Timestamp, now: Timestamp) async throws
    /// The session, unless it is unknown, revoked or expired at `now`.
    func session(tokenHash: String, now: Timestamp) async throws -> SessionInfo?
    func deleteSession(tokenHash: String) async throws
    /// Revokes every session of `user` but `keeping` (log out everywhere; after a password change).
    func deleteSessions(of user: UserID, keeping: String?) async throws
    /// Replaces the user's password hash and, in the same transaction, revokes every other session.
    func changePassword(of user: UserID, to passwordHash: String, keeping: String?) async throws
    /// Replaces the user's display name (already validated) and returns the user as now; the name
    /// search finds the new name at once, the old one no more. - Throws: ``StoreError/userNotFound``.
    func setDisplayName(of user: UserID, to displayName: String) async throws -> User
    func recordLastSeen(_ user: UserID, at: Timestamp) async throws
    func lastSeen(_ users: [UserID]) async throws -> [UserID: Timestamp]
}

/// Conversations and their membership.
public protocol ConversationStore: Sendable {
    /// Returns the direct conversation of the two users, creating it if needed, atomically: two
    /// concurrent calls end with one conversation. - Throws: ``StoreError/invalidRecipient``.
    func createDirectConversation(between user: UserID, and other: UserID, now: Timestamp) async throws -> ConversationOutcome
    /// The user's conversations, most recent activity first.
    func conversations(of user: UserID, limit: Int, before: ConversationCursor?) async throws -> [ConversationSummary]
    /// - Throws: ``StoreError/conversationNotFound`` if missing or `user` is not a member.
    func conversation(_ id: ConversationID, as user: UserID) async throws -> ConversationSummary
    /// Member ids of a conversation (empty if it does not exist).
    func memberIDs(of conversation: ConversationID) async throws -> [UserID]
    /// Everyone who shares a conversation with `user` in which both have sent a message: the
    /// people who may see `user`'s presence (a stranger who only wrote first may not).
    func contacts(of user: UserID) async throws -> [UserID]
}

/// Messages and receipts: the writes behind guarantees 1–4.
public protocol MessageStore: Sendable {
    /// Stores a message, in one transaction with its seq, the sender's cursors and every member's
    /// stream events; or returns the original message when (sender, client id) was stored before.
    /// Returns only after commit.
    func send(_ message: NewMessage, now: Timestamp) async throws -> SendOutcome
    /// Stores several messages as ``send(_:now:)`` would, one after another in the order given:
    /// each succeeds or fails on its own, and the results come back in the same order, all after
    /// commit. A store may commit the batch together (SQLite: in one transaction with whatever else
    /// is queued), which is what makes a connection's pipelined sends cheap.
    func send(_ batch: [NewMessage], now: Timestamp) async -> [Result<SendOutcome, any Error>]
    /// - Throws: ``StoreError/conversationNotFound``.
    func messages(in conversation: ConversationID, as user: UserID, query: HistoryQuery) async throws -> MessagePage
    /// Moves the member's cursors forward (read implies delivered); lower values are ignored.
    /// - Throws: ``StoreError/conversationNotFound``, ``StoreError/cursorBeyondEnd``.
    func updateReceipt(in conversation: ConversationID, member: UserID, deliveredSeq: Int64?, readSeq: Int64?, now: Timestamp) async throws -> ReceiptOutcome
}

/// Groups: creation, membership changes, invitations and message info (docs/protocol.md "Groups").
/// Every action is idempotent by (actor, clientId), shared with sends, and decided by
/// ``GroupPlan`` before anything is written.
public protocol GroupStore: Sendable {
    /// Creates a group whose owner is the creator; contacts are added, anyone else invited. A retry
    /// returns the original group and entry with `duplicate`.
    /// - Throws: ``StoreError/invalidMembers(_:)``, ``StoreError/groupFull(limit:)``,
    ///   ``StoreError/clientIdConflict``.
    func createGroup(_ group: NewGroup, now: Timestamp) async throws -> GroupOutcome
    /// Applies a membership change (``GroupPlan`` rules), or accepts an invitation.
    func changeGroup(_ change: MembershipChange, now: Timestamp) async throws -> GroupOutcome
    /// The user's pending invitations, newest first, at most ``Invitation/listLimit``.
    func invitations(of user: UserID) async throws -> [Invitation]
    /// - Throws: ``StoreError/invitationNotFound``.
    func declineInvitation(to conversation: ConversationID, user: UserID) async throws
    /// Who has the message at `seq`, which `user` sent, among the members when it was sent who are
    /// still members. - Throws: ``StoreError/conversationNotFound``, ``StoreError/messageNotFound``,
    /// ``StoreError/forbidden(_:)`` (not the sender).
    func messageInfo(in conversation: ConversationID, seq: Int64, as user: UserID) async throws -> MessageInfo
}

/// Reactions, edits, deletes and hides (docs/protocol.md "Message actions"), idempotent by
/// (actor, clientId) and decided by ``MessageActionPlan`` before anything is written.
public protocol MessageActionStore: Sendable {
    /// Applies the action, or answers a retry with the message as it is now and `duplicate`.
    /// - Throws: ``StoreError/conversationNotFound``, ``StoreError/messageNotFound``,
    ///   ``StoreError/forbidden(_:)``, ``StoreError/messageDeleted``, ``StoreError/invalidAction``,
    ///   ``StoreError/editWindowClosed``, ``StoreError/deleteWindowClosed``, ``StoreError/clientIdConflict``;
    ///   `Validation.Failure` `textEmpty` for an empty edit of a message without photos or files.
    func act(_ action: NewMessageAction, now: Timestamp) async throws -> ActionOutcome
    /// The earlier texts of a message `user` can see, oldest first.
    func versions(in conversation: ConversationID, seq: Int64, as user: UserID) async throws -> [MessageVersion]
}

/// Message search over exactly what a user can read (docs/protocol.md "Search").
public protocol MessageSearchStore: Sendable {
    /// Messages `user` can read that hold every term of `query` and pass its filters (older than
    /// its ``SearchQuery/olderThan`` hit too), in its order, skipping `offset` and returning at most
    /// `limit`. A `from:` name nobody has finds nothing.
    func search(_ query: SearchQuery, as user: UserID, limit: Int, offset: Int) async throws -> [SearchHit]
    /// One bounded step of rewriting the search index where it may still hold words of messages
    /// deleted for everyone (no search finds them, but an index that drops an entry only when it
    /// rewrites its storage keeps the bytes until then); returns whether more steps remain.
    /// Housekeeping calls it until it returns false. A store whose index needs no such step
    /// returns false.
    func purgeDeletedSearchTerms() async throws -> Bool
}

/// Each user's ordered, resumable event stream.
public protocol EventLog: Sendable {
    /// Events of `user` after position `after`, at most `limit`, or ``Replay/tooOld(head:)``.
    func events(of user: UserID, after: Int64, limit: Int) async throws -> Replay
    /// The user's newest stream position (0 before any event).
    func streamHead(of user: UserID) async throws -> Int64
    /// Forgets all but each user's newest `keepPerUser` events (counted, however far positions
    /// skipped: a resume from anything newer still replays); returns how many were removed.
    func pruneEvents(keepPerUser: Int) async throws -> Int
}

/// Everything the server needs from a database. Every backend passes the same conformance suite.
public protocol ParleyStore: AccountStore, ConversationStore, MessageStore, GroupStore, MessageActionStore, MessageSearchStore, PushSubscriptionStore,
    PushQueueStore, UploadStore, ProfilePhotoStore, EventLog
{
    /// What a new live connection of `user` needs, read together: the stream head and the contacts
    /// (as ``streamHead(of:)`` and ``contacts(of:)`` would return them). A store that can read both
    /// at once saves a round trip per connect.
    func liveStart(of user: UserID) async throws -> LiveStart
    /// Succeeds when the database answers (readiness).
    func ping() async throws
    /// Succeeds when the database can take a write now (readiness after writes failed).
    /// - Throws: ``StoreError/storageUnavailable``.
    func checkWritable() async throws
    /// Finishes pending writes and releases the database.
    func close() async throws
}

extension MessageStore {
    /// One send after another: right for any store, batched by none.
    public func send(_ batch: [NewMessage], now: Timestamp) async -> [Result<SendOutcome, any Error>] {
        var results: [Result<SendOutcome, any Error>] = []
        results.reserveCapacity(batch.count)
        for message in batch {
            do {
                results.append(.success(try await send(message, now: now)))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }
}

extension ParleyStore {
    public func liveStart(of user: UserID) async throws -> LiveStart {
        LiveStart(head: try await streamHead(of: user), contacts: try await contacts(of: user))
    }
}
