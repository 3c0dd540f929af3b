import Logging
import ParleyCore
import ParleyStore
import ServiceLifecycle

/// Applies the other nodes' signals to this node's live connections (see ``ClusterBus``):
/// committed events are delivered as carried or fetched from the store by position, ephemeral frames are delivered,
/// revoked sessions are checked against the store, users of a dead node are announced offline,
/// after the bus reconnects every connection catches up from the store and every connection's
/// session is checked again (a logout signalled while this node was not listening ended it), and a
/// node that was taken for dead restores its presence counts (its users are announced online again).
struct ClusterRelay: Service {
    let bus: any ClusterBus
    let hub: ConnectionHub
    let store: any ParleyStore
    let logger: Logger

    /// How often this node's presence counts are checked against its live connections.
    static let presenceCheckInterval: Duration = .seconds(5)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: Self.presenceCheckInterval)
                        if !Task.isCancelled { await dropStalePresence() }
                    }
                }
                for await signal in bus.signals {
                    await apply(signal)
                }
                group.cancelAll()
            }
        }
    }

    /// Closes whose count could not be written (the database was away, or came back only after a
    /// close gave up waiting), and counts restored for a node taken for dead while its sockets
    /// were closing, leave users online: this node's counts are checked against its hub when the
    /// bus reconnects and every ``presenceCheckInterval``, and the users now offline everywhere are
    /// announced (``ClusterBus/dropStalePresence(isLiveHere:)``). Found by `parley torture --cluster`.
    func dropStalePresence() async {
        do {
            let left = try await bus.dropStalePresence { [hub] user in !hub.online(among: [user]).isEmpty }
            let presence = PresenceAnnouncer(store: store, hub: hub)
            for user in left { try await presence.announceOffline(user) }
        } catch {
            logger.warning("Could not check this node's presence counts", metadata: ["error": "\(error)"])
        }
    }

    /// Presence frames are ephemeral and reach this node only while it listens: after the bus was
    /// away, each user connected here is told their contacts' presence again, since a change made
    /// meanwhile on another node was announced to nobody here. (Signals are applied one at a time,
    /// so a change announced after this refresh arrives after it.)
    func refreshPresence() async {
        let presence = PresenceAnnouncer(store: store, hub: hub)
        for user in hub.connectionCounts().keys {
            do {
                try await presence.resendSnapshot(to: user)
            } catch {
                logger.warning("Could not refresh presence after the bus reconnected", metadata: ["error": "\(error)"])
                return
            }
        }
    }

    func apply(_ signal: ClusterSignal) async {
        switch signal {
        case .streamsMoved(let heads):
            hub.streamsMoved(heads)
        case .events(let deliveries):
            // The committing node woke the push dispatchers' shared queue already.
            hub.publish(deliveries, wakingPushes: false)
        case .frame(let frame, let recipients):
            hub.sendLocally(frame, to: recipients)
        case .reconnected:
            hub.catchUpAll()
            await dropStalePresence()
            await refreshPresence()
            // A "log out everywhere" or a password change signalled while this node was not
            // listening reached nobody here: without this, its sockets stayed open and usable.
            for user in hub.connectionCounts().keys { await endRevokedSessions(of: user) }
        case .sessionsRevoked(let user):
            await endRevokedSessions(of: user)
        case .rejoined:
            do {
                let cameBack = try await bus.restore(hub.connectionCounts())
                let presence = PresenceAnnouncer(store: store, hub: hub)
                for user in cameBack { presence.announceOnline(user, to: try await store.contacts(of: user)) }
                hub.catchUpAll()
            } catch {
                logger.warning("Could not restore this node's presence", metadata: ["error": "\(error)"])
            }
        case .usersLeft(let users):
            let presence = PresenceAnnouncer(store: store, hub: hub)
            for user in users {
                do {
                    try await presence.announceOffline(user)
                } catch {
                    logger.warning("Could not announce a user of a lost node offline", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}

extension ClusterRelay {
    /// Ends this node's connections of `user` whose session the store no longer has.
    func endRevokedSessions(of user: UserID) async {
        var revoked = Set<String>()
        for token in hub.sessionTokens(of: user) {
            // A lookup that fails keeps the connection: the next revocation signal or reconnection
            // tries again; ending sessions on an outage would log everyone out.
            do {
                if try await store.session(tokenHash: token, now: .now()) == nil { revoked.insert(token) }
            } catch {
                logger.warning("Could not check a session", metadata: ["error": "\(error)"])
                return
            }
        }
        if !revoked.isEmpty { hub.endLocalSessions(of: user, revoked: revoked) }
    }
}

/// Runs the bus as one of the server's services.
struct ClusterBusService: Service {
    let bus: any ClusterBus
    func run() async throws { try await bus.run() }
}
