import Logging
import ParleyCore
import ParleyStore

/// Answers the frames of one authenticated connection, in the order they came (``InboundFrameQueue``),
/// so the messages a connection sends are committed in the order it sent them.
struct FrameResponder: Sendable {
    let store: any ParleyStore
    let hub: ConnectionHub
    let messenger: Messenger
    let typingLimiter: RateLimiter
    let connection: ClientConnection
    let logger: Logger

    var user: UserID { connection.userId }

    /// Answers what the connection's ``InboundFrameQueue`` hands over; each frame then stops counting
    /// as in flight.
    func answer(_ work: InboundFrameQueue.Work) async {
        connection.answerStarted()
        defer { connection.answerFinished() }
        switch work {
        case .sends(let requests):
            await handleSends(requests)
        case .one(.frame(let frame)):
            await handle(frame)
        case .one(.undecodable(let ref, let error)):
            connection.send(.error(ref: ref, clientId: nil, code: error.code, message: error.message))
        }
        for _ in 0..<work.frameCount { connection.endFrame() }
    }

    func handle(_ frame: ClientFrame) async {
        switch frame {
        case .hello(_, _, let ref):
            reply(ParleyError(.alreadyAuthenticated, "This connection is already authenticated."), ref: ref)
        case .send(let request):
            await handleSends([request])
        case .receipt(let ref, let conversation, let delivered, let read):
            do {
                _ = try await messenger.updateReceipt(conversation, member: user, deliveredSeq: delivered, readSeq: read)
                connection.send(.ack(ref: ref))
            } catch {
                reply(error, ref: ref)
            }
        case .typing(let conversation, let isTyping, let ref):
            // Typing beyond the budget is dropped quietly: it is ephemeral, and a client that sends
            // too much of it needs no answer.
            if isTyping, typingLimiter.acquire(user.rawValue) != nil { return }
            // The id as the server writes it (as sends and receipts read it), or no such conversation.
            guard let id = ConversationID(validating: conversation.rawValue) else { return reply(StoreError.conversationNotFound, ref: ref) }
            do {
                let members = try await store.memberIDs(of: id)
                guard members.contains(user) else { throw StoreError.conversationNotFound }
                hub.setTyping(isTyping, user: user, in: id, audience: members.filter { $0 != user })
            } catch {
                reply(await store.explainingDeparture(error, from: id, for: user), ref: ref)
            }
        case .ping(let ref):
            connection.send(.pong(ref: ref))
        case .action(let request):
            do {
                let outcome = try await messenger.act(request, by: user)
                connection.send(.acted(ref: request.ref, message: outcome.message, duplicate: outcome.duplicate))
            } catch {
                reply(error, ref: request.ref, clientId: request.clientId)
            }
        }
    }

    /// Sends that arrived in a row, stored as one batch and answered in order.
    func handleSends(_ requests: [SendRequest]) async {
        // The message's event in our own stream is not queued to this connection: the ack carries
        // its position and stands in for it (one frame instead of two).
        await messenger.send(requests, from: user, origin: connection) { request, result in
            switch result {
            case .success(let outcome):
                connection.enqueue(
                    .sent(
                        ref: request.ref, message: outcome.message, duplicate: outcome.duplicate, step: outcome.sendersStep))
            case .failure(let error):
                reply(error, ref: request.ref, clientId: request.clientId)
            }
        }
    }

    private func reply(_ error: any Error, ref: String?, clientId: ClientMessageID? = nil) {
        let visible =
            ParleyError.from(error)
            ?? {
                let description = String(reflecting: error)
                messenger.logLimiter.limit(description) { suppressed in
                    logger.error("Frame failed", metadata: ["error": "\(description)", "repeats_not_logged": "\(suppressed)"])
                }
                return ParleyError(.internalError, "Something went wrong on the server.")
            }()
        if visible.code == .storageUnavailable { messenger.health.writeFailed() }
        connection.send(.error(ref: ref, clientId: clientId, code: visible.code, message: visible.message))
    }
}

/// Presence (guarantee 6): online / last seen, told only to people who share a conversation.
struct PresenceAnnouncer: Sendable {
    let store: any ParleyStore
    let hub: ConnectionHub

    func announceOnline(_ user: UserID, to contacts: [UserID]) {
        hub.send(.presence(userId: user, online: true, lastSeenAt: nil), to: contacts)
    }

    /// Tells the user's contacts, unless they are back already, then records when the user was last
    /// seen. Contacts first: the record is a write, and a writer busy with a flood of sends held it
    /// past the close's bound, which then dropped the announcement (the user stayed online to every
    /// contact watching). The contacts are a read, which a busy writer does not hold up.
    func announceOffline(_ user: UserID) async throws {
        let now = Timestamp.now()
        if try await !hub.onlineAnywhere(among: [user]).contains(user) {
            hub.send(.presence(userId: user, online: false, lastSeenAt: now), to: try await store.contacts(of: user))
        }
        try await store.recordLastSeen(user, at: now)
    }

    /// Tells a new connection the current presence of each of its user's contacts.
    func sendSnapshot(of contacts: [UserID], to connection: ClientConnection) async throws {
        for frame in try await presenceFrames(of: contacts) { connection.send(frame) }
    }

    /// Tells every connection of `user` on this node the current presence of each of their contacts.
    func resendSnapshot(to user: UserID) async throws {
        for frame in try await presenceFrames(of: try await store.contacts(of: user)) { hub.sendLocally(frame, to: [user]) }
    }

    /// When a new conversation makes its members contacts, each learns the others' presence.
    func introduce(_ members: [UserID]) async throws {
        let frames = try await presenceFrames(of: members)
        for (member, frame) in zip(members, frames) { hub.send(frame, to: members.filter { $0 != member }) }
    }

    /// One presence frame per user, in the order given.
    private func presenceFrames(of users: [UserID]) async throws -> [ServerFrame] {
        guard !users.isEmpty else { return [] }
        let online = try await hub.onlineAnywhere(among: users)
        let lastSeen = try await store.lastSeen(users.filter { !online.contains($0) })
        return users.map { user in
            online.contains(user)
                ? .presence(userId: user, online: true, lastSeenAt: nil)
                : .presence(userId: user, online: false, lastSeenAt: lastSeen[user])
        }
    }
}
