import Foundation
import ParleyCore

/// Profiles (docs/protocol.md "Files"): a person's name, and their photo, a path on the server that
/// loads without a token.
///
/// Rules:
/// 1. A `profile` frame (someone I share a conversation with, or I on another device, changed their
///    photo or name) reaches every copy of that person the client keeps: the members of each conversation
///    (saved), ``users``, the inviters of ``invitations`` (saved) and, when it is me, ``me``. Then
///    ``ClientEvent/profile(_:)`` is emitted; observing views refresh on their own.
/// 2. The frame is ephemeral: a client offline at the time learns the photo or name from the next
///    snapshot of the conversation list (the first connection, a `resync`, or
///    ``reloadConversations()``), which replaces the members it held, from
///    ``refreshProfiles()`` when its connection resumes, and a group's members from its next refresh.
extension ParleyClient {
    /// Rule 1. `cached`: whether ``users`` takes `user` (a person read from a member list has no
    /// `createdAt` to keep there).
    func apply(profile user: User, cached: Bool = true) {
        var changed: [ConversationSummary] = []
        for var summary in conversations.values {
            var touched = false
            for index in summary.members.indices where summary.members[index].userId == user.id {
                let before = summary.members[index]
                summary.members[index].photo = user.photo
                summary.members[index].displayName = user.displayName
                summary.members[index].username = user.username
                touched = touched || summary.members[index] != before
            }
            guard touched else { continue }
            conversations[summary.id] = summary
            changed.append(summary)
        }
        if !changed.isEmpty { try? store.save(conversations: changed) }
        if cached { users[user.id] = user }
        if invitations.contains(where: { $0.inviter.id == user.id && $0.inviter != user }) {
            invitations = invitations.map { invitation in
                var invitation = invitation
                if invitation.inviter.id == user.id { invitation.inviter = user }
                return invitation
            }
            try? store.save(invitations: invitations)
        }
        if user.id == me.id, session.user != user { session.user = user }
        emit(.profile(user))
    }

    /// Changes my display name, with the rules of registration (docs/protocol.md "REST"): the answer
    /// is applied as a `profile` frame is (rule 1), so every copy of me this client keeps shows the
    /// new name at once; my peers and my other devices hear it from the server. Returns me as now.
    /// - Throws: ``ParleyClientError`` with code `invalid_display_name` (its message says why) or
    ///   `rate_limited`.
    @discardableResult
    public func setDisplayName(_ displayName: String) async throws -> User {
        let user = try await api.setDisplayName(displayName, token: session.token)
        apply(profile: user)
        return user
    }

    /// Names and photos as the server has them now, from the conversation list read again, for
    /// everyone whose name or photo this client holds otherwise: each is applied as a `profile`
    /// frame is (rule 1). Nothing else of the list is taken. A resumed connection calls it (sync
    /// rule 2 of ``ParleyClient``); a failed read changes nothing.
    public func refreshProfiles() async {
        guard let list = try? await api.conversations(token: session.token) else { return }
        var latest: [UserID: ConversationMember] = [:]
        for summary in list { for member in summary.members { latest[member.userId] = member } }
        for summary in conversations.values {
            for held in summary.members {
                guard let now = latest.removeValue(forKey: held.userId),
                    now.displayName != held.displayName || now.username != held.username || now.photo != held.photo
                else { continue }
                let known = users[now.userId] ?? (now.userId == me.id ? me : nil)
                apply(
                    profile: User(
                        id: now.userId, username: now.username, displayName: now.displayName,
                        createdAt: known?.createdAt ?? Timestamp(milliseconds: 0), photo: now.photo),
                    cached: known != nil)
            }
        }
    }

    /// A person's photo as this client last heard of it (a path, ``User/photo``): a member's of one
    /// of my conversations (what the last snapshot or `profile` frame said), someone looked up or
    /// announced (``users``), or mine as I signed in; `nil` when they have none or are unknown.
    public func photoPath(of user: UserID) -> String? {
        for summary in conversations.values {
            if let member = summary.members.first(where: { $0.userId == user }) { return member.photo }
        }
        if let known = users[user] { return known.photo }
        return user == me.id ? me.photo : nil
    }

    /// Whether the client has heard of `user` (``photoPath(of:)`` then says what it knows).
    public func knows(_ user: UserID) -> Bool {
        user == me.id || users[user] != nil || conversations.values.contains { $0.members.contains { $0.userId == user } }
    }

    /// A photo path resolved against the server: what an image view loads (no token needed).
    public func photoURL(_ path: String?) -> URL? {
        guard let path, !path.isEmpty else { return nil }
        return URL(string: path, relativeTo: session.serverURL)?.absoluteURL
    }

    /// ``photoPath(of:)`` resolved against the server.
    public func photoURL(of user: UserID) -> URL? { photoURL(photoPath(of: user)) }
}
