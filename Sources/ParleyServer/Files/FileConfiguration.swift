/// Photos and files (docs/protocol.md "Files"): where the bytes go and the limits on them.
public struct FileConfiguration: Sendable {
    /// A directory, or `s3://bucket?endpoint=…` (``S3Location``); nil keeps files in a fresh
    /// temporary directory (tests; `parley serve` always sets one).
    public var blobStore: String?
    /// The largest file (`--max-upload-bytes`).
    public var maxUploadBytes: Int64 = 100 << 20
    /// What one user's uploads may take in all (`--upload-quota-bytes`).
    public var quotaBytes: Int64 = 5 << 30
    /// New uploads per user a minute (a bucket of this size).
    public var uploadsPerMinute: Double = 60
    /// How long a signed file link works.
    public var linkLifetimeSeconds: Double = 15 * 60
    /// How long an upload may wait for a message to carry it.
    public var uploadLifetimeSeconds: Double = 24 * 3600
    /// A blob no upload names is removed once it is this old (it may be named again meanwhile by the same bytes uploaded anew).
    public var blobGraceSeconds: Double = 3600
    /// How often the collector looks for expired uploads and unnamed blobs.
    public var collectIntervalSeconds: Double = 300

    public init() {}
}
