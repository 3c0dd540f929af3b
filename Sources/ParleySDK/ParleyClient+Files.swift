import Crypto
import Foundation
import ParleyCore

/// Photos and files (docs/protocol.md "Files"; ``MessageOutbox`` rule 13): a message with files is
/// written to the outbox at once, its files uploaded one after another (1 MiB chunks, each
/// checksummed, the upload's id persisted as soon as the server made it), then the message is sent.
/// A client killed mid-upload asks the server where the upload stands when it comes back and goes on
/// from there; the message then goes once, with its client id.
extension ParleyClient {
    /// The bytes of one upload request.
    nonisolated static let uploadChunk = 1 << 20

    /// Out of the group the message was written in (removed, or left on another device): the
    /// server would refuse the message, so its files stop uploading now rather than when every
    /// byte is up. The message fails with the reason, its partial upload is given up (it holds
    /// quota), and Retry, once back in the group, uploads it anew.
    private func refuseIfNoLongerMember(_ clientId: ClientMessageID) throws {
        guard let conversation = outbox.entries.first(where: { $0.clientId == clientId })?.conversationId,
            conversations[conversation]?.leftSeq != nil
        else { return }
        throw ParleyClientError(status: 403, code: .forbidden, message: Self.notAMember)
    }

    /// Writes a message carrying the files at `paths` (at most 10; `caption` may be empty). The
    /// files are read when uploaded and must stay where they are until the message is sent: a
    /// relative path is made absolute now, against the current directory, so a client started again
    /// elsewhere still reads the file chosen (never another of that name). The
    /// server takes a photo's metadata out (where it was taken, the camera) unless `original`: sent
    /// as it was, every byte kept.
    /// - Throws: the validation failure (no such file, too many, a caption too long).
    @discardableResult
    public func sendFiles(
        _ paths: [String], caption: String = "", in conversation: ConversationID, to recipient: UserID? = nil, original: Bool = false
    ) throws(Validation.Failure) -> ClientMessageID {
        guard (1...Attachments.maxPerMessage).contains(paths.count) else {
            throw Validation.Failure(.invalidAttachment, "A message carries 1 to \(Attachments.maxPerMessage) files.")
        }
        let text = Validation.isBlankMessageText(caption) ? "" : try Validation.messageText(caption).get()
        if conversations[conversation]?.leftSeq != nil { throw Validation.Failure(.forbidden, Self.notAMember) }
        var attachments: [PendingAttachment] = []
        for path in paths.map(Self.absolutePath) {
            // Only the size here (the main actor must not read a large file); the hash is worked out by the upload.
            guard let size = Self.regularFileSize(path) else {
                let exists = FileManager.default.fileExists(atPath: path)
                throw Validation.Failure(
                    .invalidAttachment, exists ? "Cannot send \(path): a folder, a device or a pipe is not a file." : "Cannot read \(path).")
            }
            let name = Attachments.cleanName(URL(fileURLWithPath: path).lastPathComponent)
            attachments.append(PendingAttachment(path: path, name: name, size: size, original: original))
        }
        let entry = outbox.enqueue(
            text: text, conversation: conversation, recipient: conversations[conversation] == nil ? recipient : nil, attachments: attachments,
            now: .now())
        saveOutbox()
        pumpUploads()
        return entry.clientId
    }

    /// `path` against the current directory when it is relative; `~` is the home directory.
    nonisolated static func absolutePath(_ path: String) -> String {
        let expanded = (path as NSString).expandingTildeInPath
        guard !expanded.hasPrefix("/") else { return expanded }
        // Joined as written: `..` after a symbolic link is the link target's parent, as the kernel
        // reads it, which folding `a/..` away here would change.
        return (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(expanded)
    }

    /// How far the uploads of a pending message got, 0…1 (nil when it carries no files, they are all
    /// up, or it failed).
    public func uploadProgress(of clientId: ClientMessageID) -> Double? {
        guard let entry = outbox.entries.first(where: { $0.clientId == clientId }), let files = entry.attachments, !entry.isUploaded else { return nil }
        // A failed message uploads nothing until Retry: no progress to follow (a loop waiting for
        // nil would wait for ever).
        if case .failed = entry.state { return nil }
        let total = files.reduce(Int64(0)) { $0 + $1.size }
        let done = files.reduce(Int64(0)) { $0 + ($1.uploaded ? $1.size : 0) } + (uploadOffsets[clientId] ?? 0)
        return total == 0 ? 0 : min(1, Double(done) / Double(total))
    }

    /// Starts uploading what the outbox holds, unless an upload is under way.
    func pumpUploads() {
        guard uploadTask == nil, outbox.nextUpload() != nil else { return }
        uploadTask = Task { [weak self] in
            await self?.runUploads()
            self?.uploadTask = nil
        }
    }

    private func runUploads() async {
        var failures = 0
        while let (clientId, index, file) = outbox.nextUpload(), !Task.isCancelled {
            do {
                try await upload(file, of: clientId, at: index)
                failures = 0
                flushOutbox()
            } catch let error as ParleyClientError where !error.isUncertain && error.code != .uploadNotFound {
                // The server refuses this file for good (too large, quota): the message fails with its reason.
                let message =
                    error.code == .checksumMismatch
                    ? "\(file.name) changed since it was sent: Retry sends it as it is now." : error.message
                outbox.refuse(clientId, code: error.code ?? .invalidAttachment, message: message, now: .now())
                // The part sent holds the whole file's size of the quota: give it up, and Retry starts anew.
                if let partial = outbox.entries.first(where: { $0.clientId == clientId })?.attachments?[index].uploadId {
                    abandon([partial])
                    outbox.updateAttachment(clientId, at: index) { $0.uploadId = nil }
                }
                saveOutbox()
                emit(.sendFailed(clientId, error.message))
            } catch {
                // No answer or a server in trouble: try again later from the server's offset.
                failures += 1
                try? await Task.sleep(for: .milliseconds(min(30_000, 500 << min(failures, 6))))
            }
        }
    }

    /// Creates the upload if needed, asks where it stands, and sends the rest.
    private func upload(_ file: PendingAttachment, of clientId: ClientMessageID, at index: Int) async throws {
        try refuseIfNoLongerMember(clientId)
        var id = file.uploadId
        var offset: Int64 = 0
        if let known = id {
            do {
                let status = try await api.upload(known, token: session.token)
                if status.complete { return markUploaded(clientId, index) }
                offset = status.offset
            } catch let error as ParleyClientError where error.code == .uploadNotFound {
                id = nil  // expired or refused at its end: upload it again
            }
        }
        if id == nil {
            var digest = file.sha256
            if digest == nil {
                let path = file.path
                let expected = file.size
                guard let (size, hex) = await Task.detached(operation: { Self.sizeAndDigest(of: path, expected: expected) }).value, size == file.size
                else {
                    throw ParleyClientError(status: 400, code: .invalidAttachment, message: "\(file.name) can no longer be read.")
                }
                digest = hex
                outbox.updateAttachment(clientId, at: index) { $0.sha256 = hex }
                saveOutbox()
            }
            let created = try await api.createUpload(
                length: file.size, name: file.name, sha256: digest, original: file.original == true, token: session.token)
            id = created.id
            outbox.updateAttachment(clientId, at: index) { $0.uploadId = created.id }
            saveOutbox()
            if created.complete { return markUploaded(clientId, index) }
        }
        guard let id else { return }
        while offset < file.size {
            // Cancelled or deleted meanwhile: stop, and give the upload up so it holds no quota.
            guard outbox.entries.contains(where: { $0.clientId == clientId }) else { return abandon([id]) }
            try refuseIfNoLongerMember(clientId)
            let (path, at, length) = (file.path, offset, Int(min(Int64(Self.uploadChunk), file.size - offset)))
            // Read off the main actor.
            guard let chunk = await Task.detached(operation: { Self.read(path, at: at, length: length) }).value else {
                throw ParleyClientError(status: 400, code: .invalidAttachment, message: "\(file.name) can no longer be read.")
            }
            guard !chunk.isEmpty else { throw ParleyClientError(status: 400, code: .invalidAttachment, message: "\(file.name) got shorter.") }
            do {
                try await api.appendUpload(id, offset: offset, bytes: chunk, token: session.token)
            } catch let error as ParleyClientError where error.code == .offsetMismatch {
                offset = try await api.upload(id, token: session.token).offset
                continue
            }
            offset += Int64(chunk.count)
            uploadOffsets[clientId] = offset
        }
        markUploaded(clientId, index)
    }

    /// Gives up uploads no message will carry (a file message cancelled or deleted before it was
    /// sent), so they hold no quota until they expire; a failure leaves them to expire.
    func abandon(_ uploads: [UploadID]) {
        guard !uploads.isEmpty else { return }
        let (api, token) = (api, session.token)
        Task { for id in uploads { try? await api.deleteUpload(id, token: token) } }
    }

    /// The uploads a pending message made, for ``abandon(_:)``.
    func uploads(of clientId: ClientMessageID) -> [UploadID] {
        outbox.entries.first { $0.clientId == clientId }?.attachments?.compactMap(\.uploadId) ?? []
    }

    private func markUploaded(_ clientId: ClientMessageID, _ index: Int) {
        outbox.updateAttachment(clientId, at: index) { $0.uploaded = true }
        uploadOffsets[clientId] = nil
        saveOutbox()
    }

    /// Saves an attachment of a message I can see into `directory` (under its name, made unique),
    /// reading it in parts: memory stays flat whatever its size. Returns the file's path.
    ///
    /// The name is cleaned again here (``Attachments/cleanName(_:fallback:)``): whatever a server
    /// says, the file lands inside `directory`. A file that arrives shorter than its size is removed
    /// and the save fails: nothing truncated is left looking saved.
    public func save(_ attachment: Attachment, into directory: String) async throws -> String {
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let cleaned = Attachments.cleanName(attachment.name)
        var path = (directory as NSString).appendingPathComponent(cleaned)
        // Created new or not at all (O_EXCL): a name already taken, by a link that points nowhere
        // too, is never written through nor replaced, even if it appears meanwhile; "name (1)" is next.
        var descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        var copy = 1
        while descriptor < 0, errno == EEXIST, copy <= 10_000 {
            path = (directory as NSString).appendingPathComponent(Self.numbered(cleaned, copy))
            copy += 1
            descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        }
        guard descriptor >= 0 else { throw ParleyClientError(status: 0, code: nil, message: "Cannot write \(path).") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var offset: Int64 = 0
        do {
            defer { try? handle.close() }
            while offset < attachment.size {
                let length = min(Int64(4 << 20), attachment.size - offset)
                let bytes = try await api.fileBytes(attachment.id, offset: offset, length: length, token: session.token)
                guard !bytes.isEmpty else { break }
                handle.write(bytes.prefix(Int(attachment.size - offset)))
                offset += Int64(bytes.count)
            }
            guard offset >= attachment.size else {
                throw ParleyClientError(status: 0, code: nil, message: "\(cleaned) arrived incomplete (\(offset) of \(attachment.size) bytes); try again.")
            }
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
        return path
    }

    /// `name (copy).ext`, its stem cut (by whole characters) so it stays within the 255 bytes a
    /// file name may have, as `name` does.
    nonisolated static func numbered(_ name: String, _ copy: Int) -> String {
        let name = name as NSString
        let suffix = " (\(copy))" + (name.pathExtension.isEmpty ? "" : ".\(name.pathExtension)")
        var stem = name.deletingPathExtension
        while !stem.isEmpty, stem.utf8.count + suffix.utf8.count > 255 { stem.removeLast() }
        return stem + suffix
    }

    /// The size of the regular file at `path` (symbolic links followed) that this process may read,
    /// or nil: a folder, a device (`/dev/zero` never ends) or a pipe (opening it waits for a
    /// writer) is not a file to send, and reading one would crash or hang the client.
    nonisolated static func regularFileSize(_ path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, FileManager.default.isReadableFile(atPath: path) else {
            return nil
        }
        return Int64(status.st_size)
    }

    /// `length` bytes of the file at `at`, or nil when it cannot be read (no longer a regular file,
    /// or a read error: thrown, where `readData(ofLength:)` would stop the process).
    nonisolated static func read(_ path: String, at offset: Int64, length: Int) -> Data? {
        guard regularFileSize(path) != nil, let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        do {
            try handle.seek(toOffset: UInt64(offset))
            return try handle.read(upToCount: length) ?? Data()
        } catch {
            return nil
        }
    }

    /// The size and SHA-256 (hex) of a regular file, read in 1 MiB parts, at most one part past
    /// `expected` (a file that grew is not the one chosen); nil when it cannot be read.
    nonisolated static func sizeAndDigest(of path: String, expected: Int64) -> (Int64, String)? {
        guard regularFileSize(path) != nil, let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hash = SHA256()
        var size: Int64 = 0
        do {
            while size <= expected, let chunk = try handle.read(upToCount: uploadChunk), !chunk.isEmpty {
                hash.update(data: chunk)
                size += Int64(chunk.count)
            }
        } catch {
            return nil
        }
        return (size, LowercaseHex.string(Array(hash.finalize())))
    }
}
