import Foundation
import Logging
import Metrics
import ParleyCore
import ParleyStore
import ServiceLifecycle
import Synchronization

/// Sends what the push queue holds (rules in ``PushQueueStore`` and ``PushPlanner``), on its own
/// service, so a slow or dead push service never slows a send.
///
/// Rules:
/// 1. Woken by a write on this node (``PushWakeup``), at most every ``minimumGap``, else every
///    ``PushConfiguration/pollInterval`` (writes on other nodes, retries, crashed nodes' leases),
///    each node claims the users with pushes due (at most ``batch`` at a time, leased to it: one
///    node pushes for a user at a time) and works on them concurrently.
/// 2. For each: their events after the push cursor (at most ``eventsPerRound``), planned, then
///    each push sent to each of the user's targets; then the cursor moves past those events.
/// 3. A push that no target took, some saying "try again" (429, 5xx, timeout), leaves the cursor
///    where it is and retries the user after a backoff (doubling from 2 s, at most 5 minutes, or
///    the earliest of the targets' rests, ``PushTargetBackoff``); after
///    ``PushConfiguration/maxAttempts`` the events are given up. A target that says "try again"
///    while another takes the push rests alone: the user's other devices are neither held back
///    nor pushed the same again. A target that is gone (404/410, APNs `Unregistered`) is removed.
/// 4. A crash between a send and the cursor's move sends those pushes again after the lease runs
///    out: at least once on the wire, and the payload's seq lets a device show it once.
struct PushDispatcher: Service {
    let store: any ParleyStore
    let hub: ConnectionHub
    let transports: PushTransports
    let configuration: PushConfiguration
    let node: String
    let metrics: PushMetrics
    let logger: Logger
    /// Senders by name, look-alikes in groups with their usernames.
    let senderNames = PushSenderNames()

    static let batch = 64
    /// A user's push still running after this is slow (``PushSlots`` rule 1): its service hangs.
    static let slowAfter: Duration = .seconds(2)
    /// Users pushed for at once, both lanes together (``PushSlots`` rule 2).
    static let maxSlots = 1_024
    /// Rounds start at most this often: under a stream of sends, one claim per gap, not per send.
    static let minimumGap: Duration = .milliseconds(20)
    static let eventsPerRound = 200

    /// This process's id in the push queue: `host:port#incarnation`, so that a node restarting on
    /// its address takes back at once the users it held when it died (PushQueueStore rule 2). A
    /// server on a port the system picks (tests) has a name of its own each time.
    static func nodeID(port: Int) -> String {
        let incarnation = UUID().uuidString.lowercased()
        let name = port == 0 ? UUID().uuidString.lowercased() : "\(ProcessInfo.processInfo.hostName):\(port)"
        return "\(name)#\(incarnation)"
    }

    /// Rule 1. Each user is pushed for in a task of their own, and claiming goes on while some are
    /// still sending: a push service that hangs holds its own users (up to the sender's timeout),
    /// never the others', whose slots it leaves once it is slow (``PushSlots``). On graceful
    /// shutdown the pushes under way finish, then the clients close.
    func run() async throws {
        let slots = PushSlots()
        await withDiscardingTaskGroup { group in
            var nextCount = ContinuousClock.now
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                let room = slots.room(lane: Self.batch, total: Self.maxSlots)
                var claimed = 0
                if room > 0 {
                    do {
                        let now = Timestamp.now()
                        let work = try await store.claimPushWork(
                            node: node, now: now, leaseUntil: now.adding(seconds: configuration.leaseSeconds), limit: room)
                        claimed = work.count
                        for item in work {
                            let slot = slots.open()
                            group.addTask {
                                await withTaskGroup(of: Void.self) { timer in
                                    timer.addTask {
                                        try? await Task.sleep(for: Self.slowAfter)
                                        if !Task.isCancelled, slots.markSlow(slot) { hub.pushWakeup.signal() }  // room in the fast lane
                                    }
                                    await self.push(item)
                                    timer.cancelAll()
                                }
                                slots.close(slot)
                                hub.pushWakeup.signal()  // room again, and the user may have more
                            }
                        }
                    } catch {
                        logger.warning("Could not read the push queue", metadata: ["error": "\(error)"])
                    }
                }
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.minimumGap) }
                if room > 0 && claimed == room { continue }  // more are due
                // The queue's length is a count over every cursor: every 10 s is often enough for a
                // gauge (rounds come every 20 ms under load).
                if ContinuousClock.now >= nextCount, let due = try? await store.pushesDue() {
                    metrics.queued.record(due)
                    nextCount = ContinuousClock.now + .seconds(10)
                }
                await cancelWhenGracefulShutdown { await hub.pushWakeup.wait(upTo: configuration.pollInterval) }
            }
        }
        await transports.shutdown()
    }

    /// Rules 2 and 3 for one user.
    func push(_ work: PushWork) async {
        do {
            let replay = try await store.events(of: work.user, after: work.pushedPosition, limit: Self.eventsPerRound)
            guard case .events(let events, _) = replay, let last = events.last?.position else {
                // Nothing left, or pruned past the cursor: nothing to push for what is gone.
                let head: Int64 = if case .tooOld(let head) = replay { head } else { work.pushedPosition }
                try await store.finishPushWork(of: work.user, node: node, upTo: head, notified: [:])
                return
            }
            let plan = try await self.plan(events, for: work.user)
            var retryAfter: Duration?
            var failed = false
            if !plan.pushes.isEmpty {
                let targets = try await PushTargets.load(for: work.user, store: store, apns: transports.apns != nil)
                for payload in plan.pushes {
                    switch await transports.send(payload, to: targets, store: store, metrics: metrics, logger: logger) {
                    case .sent: break
                    case .retry(let after): retryAfter = max(retryAfter ?? .zero, after ?? .zero)
                    case .failed: failed = true
                    }
                }
            }
            if let retryAfter, work.attempts + 1 < configuration.maxAttempts {
                let backoff = Duration.seconds(min(300, 2 << min(work.attempts, 10)))
                let wait = max(backoff, retryAfter)
                try await store.retryPushWork(of: work.user, node: node, at: Timestamp.now().adding(seconds: wait / .seconds(1)))
                metrics.retried.increment()
                return
            }
            if retryAfter != nil || failed { metrics.failed.increment() }
            try await store.finishPushWork(of: work.user, node: node, upTo: last, notified: plan.notified)
        } catch {
            logger.warning("Pushing failed; it is tried again", metadata: ["user": "\(work.user.rawValue)", "error": "\(error)"])
            try? await store.retryPushWork(of: work.user, node: node, at: Timestamp.now().adding(seconds: 5))
        }
    }

    /// Reads what ``PushPlanner`` needs and plans.
    func plan(_ events: [StreamEvent], for user: UserID) async throws -> PushPlanner.Plan {
        let settings = try await store.notificationSettings(of: user)
        let planner = PushPlanner(
            user: user, settings: Dictionary(settings.conversations.map { ($0.conversationId, $0) }, uniquingKeysWith: { $1 }),
            preview: settings.preview, online: try await hub.onlineAnywhere(among: [user]).contains(user), now: .now(),
            notified: try await store.pushNotified(of: user))
        var senders: Set<UserID> = []
        var groups: Set<ConversationID> = []
        for event in events {
            switch event.payload {
            case .message(let message), .messageUpdated(let message):
                senders.insert(message.senderId)
                if message.conversationId.isGroup { groups.insert(message.conversationId) }
            default: break
            }
        }
        let names = try await senderNames.names(of: senders, in: groups, store: store)
        let titles = try await store.groupTitles(Array(groups))
        var plan = planner.plan(events, name: { names[$0] ?? "Someone" }, title: { $0.isGroup ? titles[$0] ?? "Group" : nil }, badge: 0)
        if !plan.pushes.isEmpty {
            let badge = try await store.unreadTotal(of: user)
            for index in plan.pushes.indices { plan.pushes[index].badge = badge }
        }
        return plan
    }
}
