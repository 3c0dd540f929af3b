import Foundation
import ParleySDK
import ParleyCore
import ParleyViewModels

/// The group commands of the interactive client. Users are named by username (`grace` or `@grace`).
extension TerminalChat {
    static let groupCommands: Set<String> = [
        "/group", "/members", "/add", "/remove", "/leave", "/rename", "/admin", "/unadmin", "/invites", "/accept", "/decline",
    ]
    static let groupHelp = """
        Groups: /group new TITLE USER… (a title with spaces in quotes: /group new "Trip 2026" grace alan) · /members · /add USER… · \
        /remove USER · /admin USER · /unadmin USER · /rename TITLE · /leave · /invites · /accept N · /decline N
        """

    func handleGroupCommand(_ command: String, _ arguments: String) async {
        switch command {
        case "/group": await newGroup(arguments)
        case "/invites": showInvitations()
        case "/accept", "/decline": await answerInvitation(command == "/accept", arguments)
        default:
            guard let chat, chat.isGroup else { return say("Open a group first (/list, then /open N).") }
            // Once I am out, every group command meets this (the chat's own reason is about sending).
            guard chat.cannotSendReason == nil else { return say(Self.notAMember) }
            await groupAction(command, arguments, in: chat)
        }
    }

    private func newGroup(_ arguments: String) async {
        guard arguments.hasPrefix("new "), let (title, usernames) = Self.titleAndWords(String(arguments.dropFirst(4))), !usernames.isEmpty else {
            return say("Usage: /group new TITLE USER… (quote a title with spaces)")
        }
        guard let users = await users(named: usernames) else { return }
        guard let group = await list.createGroup(title: title, members: users) else { return say("Could not create the group: \(list.actionError ?? "")") }
        let invited = Set(client.conversations[group.conversation].map { Set($0.members.map(\.userId)) } ?? [])
        let waiting = users.filter { !invited.contains($0.id) }
        if !waiting.isEmpty { say("Invited (they join when they accept): " + GroupText.joinNames(waiting.map(\.displayName))) }
        await open(group)
    }

    private func groupAction(_ command: String, _ arguments: String, in chat: ChatViewModel) async {
        switch command {
        case "/members":
            await chat.refreshMembers()
            for member in chat.members { say("  \(member.name) (@\(member.username))" + (member.roleLabel.map { " — \($0)" } ?? "")) }
            if chat.cannotSendReason != nil { say(Self.notAMember) }  // out since the read
        case "/add":
            let usernames = arguments.split(separator: " ").map(String.init)
            guard !usernames.isEmpty else { return say("Usage: /add USER…") }
            guard let users = await users(named: usernames) else { return }
            // The server names one already in by id: name them here, before asking.
            if let present = users.first(where: { user in chat.members.contains { $0.id == user.id } }) {
                return say("\(present.displayName) is already a member.")
            }
            guard let invited = await chat.addMembers(users) else { return say(chat.errorMessage ?? "Could not add.") }
            if !invited.isEmpty { say("Invited (they join when they accept): " + GroupText.joinNames(invited.map(\.displayName))) }
        case "/remove", "/admin", "/unadmin":
            let wanted = arguments.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "@ "))
            guard !wanted.isEmpty else { return say("Usage: \(command) USER") }
            if command == "/remove", wanted == client.session.user.username { return say("To leave the group, type /leave.") }
            guard let member = chat.members.first(where: { $0.username == wanted }) else { return say("No member named '\(wanted)' (see /members).") }
            let done =
                switch command {
                case "/remove": await chat.remove(member)
                case "/admin": await chat.makeAdmin(member)
                default: await chat.dismissAdmin(member)
                }
            if !done { say(chat.errorMessage ?? "Could not do that.") }
        case "/rename":
            guard !arguments.isEmpty else { return say("Usage: /rename TITLE") }
            if await !chat.rename(to: arguments) { say(chat.errorMessage ?? "Could not rename.") }
        case "/leave":
            if await !chat.leave() { say(chat.errorMessage ?? "Could not leave.") }
        default:
            break
        }
    }

    private func showInvitations() {
        shownInvitations = list.invitations
        if shownInvitations.isEmpty { return say("No invitations.") }
        for (index, invitation) in shownInvitations.enumerated() {
            say("  \(index + 1). “\(invitation.title)” — \(invitation.detail) · \(invitation.timestamp)")
        }
    }

    /// N is a number of the list `/invites` printed last: an invitation that came in since cannot
    /// take its place, and one answered or withdrawn since is said to be gone.
    private func answerInvitation(_ accept: Bool, _ arguments: String) async {
        guard let number = Int(arguments), shownInvitations.indices.contains(number - 1) else {
            return say("Usage: /\(accept ? "accept" : "decline") N, N a number /invites showed (type /invites to see them)")
        }
        let shown = shownInvitations[number - 1]
        guard let invitation = list.invitations.first(where: { $0.id == shown.id }) else {
            return say("The invitation to “\(shown.title)” is no longer pending (type /invites to see those that are).")
        }
        if accept {
            guard let group = await list.accept(invitation) else { return say("Could not join: \(list.actionError ?? "")") }
            await open(group)
        } else {
            await list.decline(invitation)
            say(list.actionError.map { "Could not decline: \($0)" } ?? "Declined “\(invitation.title)”.")
        }
    }

    /// The users of these usernames, or `nil` after saying which one does not exist (or is me).
    private func users(named usernames: [String]) async -> [User]? {
        var users: [User] = []
        for username in usernames {
            // Search leaves me out, which would read "No user named …".
            if username.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "@ ")) == client.me.username {
                say("You can't add yourself: you are in the group already.")
                return nil
            }
            do {
                users.append(try await printer.user(named: username))
            } catch {
                say("\(error)")
                return nil
            }
        }
        return users
    }

    static let notAMember = "You are no longer a member of this group."

    /// `"Trip 2026" grace alan` or `Trip grace alan`: the title (quoted, or the first word) and the words after it.
    static func titleAndWords(_ text: String) -> (String, [String])? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("\"") || text.hasPrefix("“") {
            let rest = text.dropFirst()
            guard let end = rest.firstIndex(where: { $0 == "\"" || $0 == "”" }) else { return nil }
            return (String(rest[..<end]), rest[rest.index(after: end)...].split(separator: " ").map(String.init))
        }
        let words = text.split(separator: " ").map(String.init)
        guard let title = words.first else { return nil }
        return (title, Array(words.dropFirst()))
    }
}
