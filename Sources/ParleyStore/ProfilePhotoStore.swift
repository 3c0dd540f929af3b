import ParleyCore

/// Profile photos (docs/protocol.md "Files"): a complete image upload of a user's becomes their photo.
///
/// Rules (``ProfilePhotoConformanceTests`` on every backend):
/// 1. A photo is a complete upload of the user's own whose kind is `image`, that no message carries
///    and that is no one else's photo (``StoreError/invalidAttachment`` otherwise).
/// 2. The photo claims its upload: it never expires, no message can carry it, and tus termination
///    cannot remove it (``StoreError/uploadAttached``).
/// 3. Replacing or removing a photo removes the previous one's upload; its blob becomes a collector
///    candidate, as a deleted message's files do.
/// 4. Every ``User`` and ``ConversationMember`` a store reads carries the photo's path
///    (``API/photoPath(_:)``), and its bytes are served (``photoAccess(_:)``) only while it is
///    someone's current photo.
/// 5. ``peers(of:)`` are who is told live when the photo changes: everyone who shares a conversation
///    with the user now, both as current members (a direct conversation's two, a group's open spans).
///    Someone removed from a group, or who left it, is no peer through it any more.
public protocol ProfilePhotoStore: Sendable {
    /// Makes `upload` the user's photo (nil removes it), in one transaction; returns the user as now.
    /// Setting the current photo again changes nothing.
    /// - Throws: ``StoreError/invalidAttachment``, ``StoreError/userNotFound``.
    func setPhoto(of user: UserID, upload: UploadID?, now: Timestamp) async throws -> User
    /// What serving the photo needs, while `id` is someone's current photo; nil otherwise.
    func photoAccess(_ id: UploadID) async throws -> FileAccess?
    /// The other users who share a conversation with `user`, each once (rule 5): the other member
    /// of each direct conversation, and everyone with an open span in a group where `user` has one.
    func peers(of user: UserID) async throws -> [UserID]
}
