import Foundation
import ParleyCore
import ParleySDK
import ParleyViewModels

/// Files in the interactive client (docs/protocol.md "Files"): `/send-file PATH [CAPTION]` uploads
/// in the background with progress lines and sends once every byte is up (a client killed meanwhile
/// goes on where the server stopped), a photo without its metadata; a relative PATH is the file in
/// the directory the client runs in now, whatever directory it is started in later; `/send-original` sends it as it was; a
/// message's files print as `[photo 1.2 MB beach.jpg]`; `/save N [DIR]` saves the files of message N.
extension TerminalChat {
    static let fileCommands: Set<String> = ["/send-file", "/send-original", "/save"]
    static let fileHelp =
        "Files: /send-file PATH [CAPTION] · /save N [DIR] (the files of message N, into DIR or the current directory)"
        + " · /send-original PATH [CAPTION] (a photo as it was, with where it was taken and the camera)"

    func handleFileCommand(_ command: String, _ arguments: String) async {
        guard let chat else { return say("Open a chat first.") }
        switch command {
        case "/send-file", "/send-original":
            let (path, caption) = Self.pathAndRest(arguments)
            guard !path.isEmpty else { return say("Usage: \(command) PATH [CAPTION]") }
            do {
                let id = try client.sendFiles(
                    [(path as NSString).expandingTildeInPath], caption: caption, in: chat.conversation, original: command == "/send-original")
                printStatusChanges()
                // Followed on the side: the line stays open for other messages and commands (and
                // /quit) while the file goes up, or waits in the outbox while offline.
                let name = URL(fileURLWithPath: path).lastPathComponent, conversation = chat.conversation
                Task {
                    await self.followUpload(id, named: name)
                    self.printStatusChanges()
                    await self.sayOutcome(of: id, named: name, in: conversation)
                }
            } catch {
                say("Not sent: \(error.message)")
            }
        default:
            let (numberText, directory) = Self.pathAndRest(arguments)
            guard let number = Int(numberText), let id = numbers.id(of: number),
                let item = client.timeline(chat.conversation).first(where: { $0.id == id })
            else { return say("Usage: /save N [DIR] (N is the number in [ ] before a message)") }
            guard !item.attachments.isEmpty else { return say("[\(number)] has no files.") }
            let target = directory.isEmpty ? FileManager.default.currentDirectoryPath : (directory as NSString).expandingTildeInPath
            for attachment in item.attachments {
                do {
                    say("Saved \(try await client.save(attachment, into: target))")
                } catch {
                    say("Could not save \(attachment.name): \(error)")
                }
            }
        }
    }

    /// Prints the upload's progress in steps of a quarter until the message is on its way, naming
    /// the file (another chat may be open by then). A failure is said once, by the message's status
    /// line ("! failed: … — /retry"), or by ``sayOutcome(of:named:in:)``.
    private func followUpload(_ id: ClientMessageID, named name: String) async {
        var shown = -1
        while let progress = client.uploadProgress(of: id) {
            let step = Int(progress * 4)
            if step != shown {
                say("Uploading \(name)… \(Int(progress * 100))%")
                shown = step
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Where the file went, when its chat is no longer the open one (the open one's status line
    /// says it there): sent, or why not and how to retry.
    private func sayOutcome(of id: ClientMessageID, named name: String, in conversation: ConversationID) async {
        // Every byte is up; the message itself is on its way until the server answers.
        var item = client.timeline(conversation).first { $0.id == id }
        while item?.status == .sending {
            try? await Task.sleep(for: .milliseconds(100))
            item = client.timeline(conversation).first { $0.id == id }
        }
        guard chat?.conversation != conversation, let item else { return }
        let title = list.rows.first(where: { $0.id == conversation })?.title ?? "a chat"
        if case .failed(let reason) = item.status {
            say("• \(name) was not sent to \(title): \(reason) — open that chat and /retry")
        } else {
            say("• \(name) sent to \(title)")
        }
    }

    /// The first word (or a "quoted path") and the rest.
    static func pathAndRest(_ text: String) -> (String, String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("\""), let end = trimmed.dropFirst().firstIndex(of: "\"") {
            return (
                String(trimmed[trimmed.index(after: trimmed.startIndex)..<end]),
                String(trimmed[trimmed.index(after: end)...]).trimmingCharacters(in: .whitespaces)
            )
        }
        let parts = trimmed.split(separator: " ", maxSplits: 1).map(String.init)
        return (parts.first ?? "", parts.count > 1 ? parts[1] : "")
    }
}

extension ChatPrinter {
    /// `[photo 1.2 MB beach.jpg]` for each file of a message (a pending one's as it uploads).
    static func fileTags(_ item: TimelineItem) -> String {
        let confirmed = item.attachments.map { "[\(kindWord($0.kind, $0.mimeType)) \(ByteCount.text($0.size)) \($0.name)]" }
        // A failed message uploads nothing until /retry: its files say so, not "uploading".
        var waiting = ", uploading"
        if case .failed = item.status { waiting = ", not sent" }
        let pending = item.pendingFiles.map { "[file \(ByteCount.text($0.size)) \($0.name)\($0.uploaded ? "" : waiting)]" }
        return (confirmed + pending).joined(separator: " ")
    }

    static func kindWord(_ kind: AttachmentKind, _ mimeType: String) -> String {
        switch kind {
        case .image: mimeType == "image/gif" ? "GIF" : "photo"
        case .video: "video"
        case .audio: "audio"
        case .file: "file"
        }
    }
}

/// Sizes as people read them: "532 bytes", "12 KB", "1.2 MB" (decimal units, as file managers show).
enum ByteCount {
    static func text(_ bytes: Int64) -> String {
        if bytes < 1000 { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
        let units = ["KB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return value < 10 ? String(format: "%.1f %@", value, units[unit]) : "\(Int(value.rounded())) \(units[unit])"
    }
}
