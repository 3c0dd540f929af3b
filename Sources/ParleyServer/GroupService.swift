import ParleyCore
import ParleyStore

/// The one path by which groups change, for every route: rate limit, validate, commit (the store
/// decides by ``GroupPlan``), then fan the committed events out and end a departed member's typing.
struct GroupService: Sendable {
    let store: any ParleyStore
    let hub: ConnectionHub
    /// Creations and adds per user: filling groups with strangers is what spam does.
    let limiter: RateLimiter
    let maxMembers: Int

    func create(_ request: API.CreateGroupRequest, by user: UserID) async throws -> (outcome: GroupOutcome, conversation: ConversationSummary) {
        let clientId = try Self.clientId(request.clientId)
        let title = try Validation.groupTitle(request.title).get()
        let members = try userIDs(request.memberIds)
        try await limit(user, naming: members)
        let outcome = try await store.createGroup(
            NewGroup(
                creator: user, clientId: clientId, title: title, memberIds: members, maxMembers: maxMembers, shareHistory: request.shareHistory ?? false),
            now: .now())
        hub.publish(outcome.deliveries)
        return (outcome, try await store.conversation(outcome.conversationId, as: user))
    }

    /// Any change but a create; adds spend a rate-limit token.
    func change(_ conversation: String, _ action: MembershipChange.Action, clientId raw: ClientMessageID, by user: UserID) async throws -> GroupOutcome {
        let clientId = try Self.clientId(raw)
        guard let id = ConversationID(validating: conversation), id.isGroup else {
            throw action == .accept ? StoreError.invitationNotFound : StoreError.conversationNotFound
        }
        if case .add(let users, _) = action { try await limit(user, naming: users) }
        let outcome: GroupOutcome
        do {
            outcome = try await store.changeGroup(
                MembershipChange(actor: user, clientId: clientId, conversation: id, action: action, maxMembers: maxMembers), now: .now())
        } catch {
            throw await store.explainingDeparture(error, from: id, for: user)
        }
        hub.publish(outcome.deliveries)
        for departed in outcome.departed { hub.stopTyping(user: departed, in: id) }
        return outcome
    }

    func decline(_ conversation: String, by user: UserID) async throws {
        guard let id = ConversationID(validating: conversation), id.isGroup else { throw StoreError.invitationNotFound }
        try await store.declineInvitation(to: id, user: user)
    }

    /// Spends a token of `user`'s bucket, once the people named are known to exist (a request the
    /// store would refuse as "no such user" costs nothing).
    private func limit(_ user: UserID, naming users: [UserID]) async throws {
        guard try await store.users(Array(Set(users))).count == Set(users).count else { throw StoreError.userNotFound }
        if let wait = limiter.acquire(user.rawValue) {
            throw ParleyError(.rateLimited, "Too many group changes; try again in \(wait) s.", retryAfter: wait)
        }
    }

    static func clientId(_ raw: ClientMessageID) throws -> ClientMessageID {
        guard let id = ClientMessageID(validating: raw.rawValue) else { throw ParleyError(.invalidClientId, "clientId must be a UUID.") }
        return id
    }

    /// User ids from a request: each must be a UUID (anything else is no such user). More than this
    /// server's group limit cannot fit, so a request cannot make the store look up an unbounded list.
    func userIDs(_ raw: [UserID]) throws -> [UserID] {
        guard raw.count <= maxMembers else { throw StoreError.groupFull(limit: maxMembers) }
        return try raw.map { id in
            guard let valid = UserID(validating: id.rawValue) else { throw StoreError.userNotFound }
            return valid
        }
    }
}
