import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels

/// The numbers messages carry on screen in the open chat ("[3]"), which the message commands take:
/// a message keeps its number from the moment it is first printed (mine from their first status line).
@MainActor
final class MessageNumbers {
    private var ids: [ClientMessageID] = []
    private var numbers: [ClientMessageID: Int] = [:]
    /// The lines last printed for each numbered message, without its status mark: a change to the
    /// message (edit, delete, reaction, its quote) prints it again, nothing else does.
    var printed: [ClientMessageID: [String]] = [:]
    /// Every message and entry printed since the chat opened: the stream may bring one that opening
    /// the chat printed already (the entries of a group I just made), and each is printed once.
    var shown: Set<ClientMessageID> = []

    /// The message's number, given now if it had none.
    func number(for id: ClientMessageID) -> Int {
        if let known = numbers[id] { return known }
        ids.append(id)
        numbers[id] = ids.count
        return ids.count
    }

    /// The message of a number shown.
    func id(of number: Int) -> ClientMessageID? {
        ids.indices.contains(number - 1) ? ids[number - 1] : nil
    }

    /// A new chat starts at 1.
    func reset() {
        ids = []
        numbers = [:]
        printed = [:]
        shown = []
    }
}

/// The message commands of the interactive client: `/reply N text`, `/react N 👍` (`/react N`
/// takes mine back), `/edit N text`, `/delete N` (for everyone), `/delete N me` (for me).
extension TerminalChat {
    static let messageCommands: Set<String> = ["/reply", "/react", "/edit", "/delete"]
    static let messageHelp = """
        Messages (N is the number in [ ] before one): /reply N TEXT · /react N 👍 (/react N takes yours back) · /edit N TEXT · \
        /delete N (for everyone) · /delete N me (for you)
        """
    private static let usage = [
        "/reply": "/reply N TEXT", "/react": "/react N EMOJI, or /react N to take yours back", "/edit": "/edit N TEXT",
        "/delete": "/delete N (for everyone) or /delete N me (for you)",
    ]

    /// Prints a message (numbered; `marked` with "» " first, the message a search found) or an
    /// entry, and remembers what was printed.
    func printItem(_ item: TimelineItem, marked: Bool = false) {
        guard let chat, numbers.shown.insert(item.id).inserted else { return }
        guard item.entry == nil else { return printer.lines(for: item, in: chat.conversation).forEach(say) }
        let number = numbers.number(for: item.id)
        let lines = printer.lines(for: item, in: chat.conversation, number: number)
        for (index, line) in lines.enumerated() { say(marked && index == lines.count - 1 ? "» " + line : line) }
        numbers.printed[item.id] = withoutStatus(item, number: number)
        if let status = item.status { printedStatus[item.id] = status }
    }

    /// Prints again the numbered messages that changed since they were printed, and says which left.
    func reprintChangedMessages() {
        guard let chat else { return }
        let items = client.timeline(chat.conversation)
        for item in items where item.entry == nil {
            guard let before = numbers.printed[item.id] else { continue }
            let now = withoutStatus(item, number: numbers.number(for: item.id))
            guard now != before else { continue }
            numbers.printed[item.id] = now
            now.forEach(say)
        }
        let present = Set(items.map(\.id))
        for id in numbers.printed.keys where !present.contains(id) {
            numbers.printed[id] = nil
            say("  [\(numbers.number(for: id))] deleted for you")
        }
    }

    func handleMessageCommand(_ command: String, _ arguments: String) async {
        guard let chat else { return say("Open a chat first.") }
        let parts = arguments.split(separator: " ", maxSplits: 1).map(String.init)
        let rest = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        guard let number = parts.first.flatMap(Int.init), let id = numbers.id(of: number),
            let item = client.timeline(chat.conversation).first(where: { $0.id == id })
        else { return say("Usage: \(Self.usage[command] ?? command) — N is the number in [ ] before a message.") }
        var said: String?  // why a reply or an edit could not go, said already
        switch command {
        case "/reply":
            guard !rest.isEmpty else { return say("Usage: \(Self.usage[command] ?? command)") }
            chat.startReply(to: item)
            said = send(rest, in: chat)
            chat.cancelReply()  // when it could not go
        case "/react":
            chat.react(item, with: rest.isEmpty ? nil : rest)
        case "/edit":
            guard !rest.isEmpty else { return say("Usage: \(Self.usage[command] ?? command)") }
            guard chat.startEditing(item) else {
                return say(item.isDeleted ? "A deleted message can't be edited." : chat.cannotSendReason ?? "You can only edit your own messages.")
            }
            said = send(rest, in: chat)
            chat.cancelEditing()  // when it could not go
        case "/delete" where rest.isEmpty:
            guard chat.canDeleteForEveryone(item) else {
                let rule = "You can only delete your own messages for everyone"
                return say(item.isDeleted ? "Already deleted." : "\(chat.cannotSendReason ?? rule) (/delete N me deletes it for you).")
            }
            chat.deleteForEveryone(item)
        case "/delete" where rest == "me":
            chat.deleteForMe(item)
        default:
            return say("Usage: \(Self.usage[command] ?? command)")
        }
        if let error = chat.errorMessage, error != said { say(error) }
        if item.seq == nil, !client.timeline(chat.conversation).contains(where: { $0.id == item.id }) {
            numbers.printed[item.id] = nil
            say("  [\(number)] cancelled: it was never sent")
        }
        reprintChangedMessages()
        printStatusChanges()
    }

    /// Puts `text` in the composer and sends it (a reply or an edit when one was started), saying
    /// why not when it cannot go; returns what it said.
    @discardableResult
    func send(_ text: String, in chat: ChatViewModel) -> String? {
        chat.messageText = text
        var said: String?
        if let reason = chat.cannotSendReason {
            said = reason
        } else if !chat.canSend {
            said = chat.characterCount > Validation.maxMessageCharacters ? "Too long (\(chat.characterCount) characters)." : "Nothing to send."
        }
        if let said { say(said) }
        chat.send()
        return said
    }

    /// A message's lines as compared to see whether it changed: without its status mark.
    func withoutStatus(_ item: TimelineItem, number: Int) -> [String] {
        var item = item
        item.status = nil
        return printer.lines(for: item, in: item.conversationId, number: number)
    }
}
