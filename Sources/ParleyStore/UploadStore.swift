import ParleyCore

/// Uploads and who may read them (docs/protocol.md "Files"). The bytes live in a blob store; the
/// database keeps each upload's owner, promise and reading, and which message carries it.
///
/// Rules (``UploadConformanceTests`` on every backend):
/// 1. An upload is its owner's alone until a message carries it: others never see it.
/// 2. A user's uploads (complete or not, carried or not) never add up past their quota.
/// 3. A send claims complete, unclaimed uploads of its sender in its own transaction
///    (``MessageStore/send(_:now:)``, ``StoreError/invalidAttachment`` otherwise): one message per upload.
/// 4. A file can be read by its owner, and by a current member who can see the message carrying
///    it, while that message is not deleted for everyone (a deleted message's uploads are removed
///    with its text). Someone removed from a group, or who left, keeps the messages they saw but no
///    longer gets the files' bytes.
/// 5. Unclaimed uploads expire; a blob is referenced while any upload names it.
/// 6. A profile photo claims its upload too (``ProfilePhotoStore``): no message can carry it.
public protocol UploadStore: Sendable {
    /// - Throws: ``StoreError/quotaExceeded(limit:)``.
    func createUpload(_ upload: NewUpload, quota: Int64, now: Timestamp) async throws
    /// What the owner's uploads add up to, as rule 2 counts them: a look before bytes are taken
    /// for an upload not yet created (``createUpload(_:quota:now:)`` still decides).
    func uploadedBytes(of owner: UserID) async throws -> Int64
    /// The owner's upload, or nil (someone else's, expired, unknown).
    func upload(_ id: UploadID, owner: UserID) async throws -> StoredUpload?
    /// Records what the complete upload turned out to be. - Throws: ``StoreError/uploadNotFound``.
    func completeUpload(_ id: UploadID, owner: UserID, _ reading: UploadReading, now: Timestamp) async throws -> StoredUpload
    /// Removes an unclaimed upload. - Throws: ``StoreError/uploadNotFound``, ``StoreError/uploadAttached`` (a message's
    /// or a profile photo's).
    func deleteUpload(_ id: UploadID, owner: UserID) async throws
    /// What `user` may read of the upload (rule 4), or nil.
    func fileAccess(_ id: UploadID, for user: UserID) async throws -> FileAccess?
    /// Unclaimed uploads whose time ran out before `now`, at most `limit`.
    func expiredUploads(now: Timestamp, limit: Int) async throws -> [UploadID]
    /// Removes these uploads if still unclaimed; returns the ones removed.
    func removeExpiredUploads(_ ids: [UploadID], now: Timestamp) async throws -> [UploadID]
    /// Those of `blobs` (sha256 keys) that some upload still names.
    func referencedBlobs(_ blobs: [String]) async throws -> Set<String>
    /// Blobs an upload stopped naming (removed with a deleted message, expired), oldest first: the
    /// collector's first look, before its sweep of every blob.
    func blobCandidates(limit: Int) async throws -> [String]
    /// The collector is done with these candidates (removed, or named again).
    func dropBlobCandidates(_ blobs: [String]) async throws
}

/// An upload as created by `POST /v1/uploads`.
public struct NewUpload: Sendable, Equatable {
    public var id: UploadID
    public var owner: UserID
    /// The cleaned file name.
    public var name: String
    /// The bytes promised (`Upload-Length`).
    public var length: Int64
    /// The promised sha256 (lowercase hex), checked when the last byte arrives.
    public var sha256: String?
    public var expiresAt: Timestamp
    /// Sent as it was (tus metadata `original`): a photo keeps its metadata.
    public var keepsMetadata: Bool

    public init(id: UploadID, owner: UserID, name: String, length: Int64, sha256: String?, expiresAt: Timestamp, keepsMetadata: Bool = false) {
        self.id = id
        self.owner = owner
        self.name = name
        self.length = length
        self.sha256 = sha256
        self.expiresAt = expiresAt
        self.keepsMetadata = keepsMetadata
    }
}

/// What a complete upload is, read by the server from its bytes.
public struct UploadReading: Sendable, Equatable, Hashable {
    /// The blob's key (sha256, lowercase hex).
    public var blob: String
    public var mimeType: String
    public var kind: AttachmentKind
    public var width: Int?
    public var height: Int?

    public init(blob: String, mimeType: String, kind: AttachmentKind, width: Int? = nil, height: Int? = nil) {
        self.blob = blob
        self.mimeType = mimeType
        self.kind = kind
        self.width = width
        self.height = height
    }
}

/// An upload as the database keeps it.
public struct StoredUpload: Sendable, Equatable, Hashable {
    public var id: UploadID
    public var owner: UserID
    public var name: String
    public var length: Int64
    public var sha256: String?
    public var createdAt: Timestamp
    public var expiresAt: Timestamp
    /// Set once the last byte arrived and the file was read.
    public var reading: UploadReading?
    /// The message carrying it.
    public var conversationId: ConversationID?
    public var seq: Int64?
    /// The user whose profile photo it is.
    public var photoOf: UserID?
    /// Sent as it was: a photo keeps its metadata (``NewUpload/keepsMetadata``).
    public var keepsMetadata: Bool

    public init(
        id: UploadID, owner: UserID, name: String, length: Int64, sha256: String?, createdAt: Timestamp, expiresAt: Timestamp,
        reading: UploadReading? = nil, conversationId: ConversationID? = nil, seq: Int64? = nil, photoOf: UserID? = nil, keepsMetadata: Bool = false
    ) {
        self.keepsMetadata = keepsMetadata
        self.id = id
        self.owner = owner
        self.name = name
        self.length = length
        self.sha256 = sha256
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.reading = reading
        self.conversationId = conversationId
        self.seq = seq
        self.photoOf = photoOf
    }

    /// Whether a message or a profile photo holds it: then it never expires and nothing else may take it.
    public var isClaimed: Bool { conversationId != nil || photoOf != nil }

    /// The attachment a send makes of this complete upload with what the client supplied.
    public func attachment(_ request: AttachmentRequest) -> Attachment? {
        guard let reading else { return nil }
        let clientSized = reading.kind == .video
        return Attachment(
            id: id, name: name, mimeType: reading.mimeType, kind: reading.kind, size: length,
            width: clientSized ? request.width : reading.width, height: clientSized ? request.height : reading.height,
            thumbnail: request.thumbnail, placeholder: request.placeholder,
            durationMs: reading.kind == .video || reading.kind == .audio ? request.durationMs : nil)
    }
}

/// What serving a file needs.
public struct FileAccess: Sendable, Equatable {
    public var blob: String
    public var size: Int64
    public var name: String
    public var mimeType: String
    public var kind: AttachmentKind

    public init(blob: String, size: Int64, name: String, mimeType: String, kind: AttachmentKind) {
        self.blob = blob
        self.size = size
        self.name = name
        self.mimeType = mimeType
        self.kind = kind
    }
}
