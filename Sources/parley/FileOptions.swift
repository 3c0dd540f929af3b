import ArgumentParser
import ParleyServer

/// `parley serve`'s options for photos and files (docs/deployment.md "Files").
struct FileOptions: ParsableArguments {
    @Option(
        help:
            "Where files are kept: a directory, or s3://bucket?endpoint=…&region=… (an S3-compatible service). [env: PARLEY_FILES] (default: beside the SQLite database; data/files with PostgreSQL)"
    )
    var files: String?
    @Option(help: "The largest file, in bytes. [env: PARLEY_MAX_UPLOAD_BYTES] (default: 104857600, 100 MiB)")
    var maxUploadBytes: Int64?
    @Option(help: "What one user's files may take in all, in bytes. [env: PARLEY_UPLOAD_QUOTA_BYTES] (default: 5368709120, 5 GiB)")
    var uploadQuotaBytes: Int64?
    @Option(help: "New uploads per user a minute. [env: PARLEY_UPLOADS_PER_MINUTE] (default: 60)")
    var uploadsPerMinute: Double?

    /// The file settings; `sqlitePath` is the database file when not PostgreSQL.
    func configuration(_ settings: Settings, sqlitePath: String?) throws -> FileConfiguration {
        var files = FileConfiguration()
        files.blobStore = self.files ?? settings.string("PARLEY_FILES") ?? sqlitePath.map { $0 + ".files" } ?? "data/files"
        if let bytes = try maxUploadBytes ?? settings.int("PARLEY_MAX_UPLOAD_BYTES").map(Int64.init) {
            guard (1...(1 << 40)).contains(bytes) else { throw ValidationError("max-upload-bytes must be from 1 to 1 TiB, not \(bytes).") }
            files.maxUploadBytes = bytes
        }
        if let bytes = try uploadQuotaBytes ?? settings.int("PARLEY_UPLOAD_QUOTA_BYTES").map(Int64.init) {
            guard bytes >= 0 else { throw ValidationError("upload-quota-bytes must not be negative.") }
            files.quotaBytes = bytes
        }
        if let rate = try uploadsPerMinute ?? settings.double("PARLEY_UPLOADS_PER_MINUTE") {
            guard rate > 0, rate.isFinite else { throw ValidationError("uploads-per-minute must be more than 0.") }
            files.uploadsPerMinute = rate
        }
        return files
    }
}
