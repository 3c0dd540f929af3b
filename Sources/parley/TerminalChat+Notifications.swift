import Foundation
import ParleyCore
import ParleySDK
import ParleyViewModels

/// Notification commands of the interactive client: `/mute [N] [8h|1w|always]` (8 hours when no
/// length is given), `/unmute [N]`, `/notify [N] all|mentions|none`. N is an entry of `/list`;
/// without it, the open chat.
extension TerminalChat {
    static let notificationCommands: Set<String> = ["/mute", "/unmute", "/notify"]
    static let notificationHelp = """
        Notifications (N from /list; without N, the open chat): /mute [N] [8h|1w|always] · /unmute [N] · /notify [N] all|mentions|none
        """

    func handleNotificationCommand(_ command: String, _ arguments: String) async {
        var words = arguments.split(separator: " ").map(String.init)
        var target = chat?.conversation
        if let first = words.first, let number = Int(first) {
            guard rows.indices.contains(number - 1) else { return say("No entry \(number) in the list: /list shows them.") }
            target = rows[number - 1].id
            words.removeFirst()
        }
        guard let target else { return say("Open a chat first, or give its number from /list.") }
        let name = client.title(of: target) ?? "the chat"
        do {
            switch command {
            case "/mute":
                guard words.count <= 1, let duration = MuteDuration(rawValue: words.first ?? "8h"), duration != .off else {
                    return say("Usage: /mute [N] [8h|1w|always]")
                }
                try await client.mute(target, for: duration)
                say(duration == .always ? "Muted \(name)." : "Muted \(name) until \(Self.untilText(client.notificationSetting(of: target).mutedUntil)).")
            case "/unmute":
                guard words.isEmpty else { return say("Usage: /unmute [N]") }
                try await client.mute(target, for: .off)
                say("Unmuted \(name).")
            default:
                guard words.count == 1, let level = NotificationLevel(rawValue: words[0]) else { return say("Usage: /notify [N] all|mentions|none") }
                try await client.setNotificationLevel(level, for: target)
                let what =
                    switch level {
                    case .all: "every message"
                    case .mentions: "mentions only"
                    case .none: "nothing"
                    }
                say("\(name) notifies you of \(what).")
            }
        } catch {
            say("Could not change notifications: \(error)")
        }
    }

    private static func untilText(_ until: Timestamp?) -> String {
        guard let until else { return "now" }
        return until.date.formatted(date: .abbreviated, time: .shortened)
    }
}
