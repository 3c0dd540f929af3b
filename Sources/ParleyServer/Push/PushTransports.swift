internal import AsyncHTTPClient
import Foundation
import Logging
import Metrics
import ParleyCore
import ParleyStore

/// Where one user's pushes go: their browsers' subscriptions and their iOS devices.
struct PushTargets: Sendable {
    var web: [PushSubscriptionRecord]
    var apple: [APNsDeviceRecord]

    static func load(for user: UserID, store: any ParleyStore, apns: Bool) async throws -> PushTargets {
        PushTargets(web: try await store.pushSubscriptions(of: user), apple: apns ? try await store.apnsTokens(of: user) : [])
    }
}

/// What became of one push to all of a user's targets.
enum PushSendResult: Sendable, Equatable {
    /// Taken by at least one target (or there is none).
    case sent
    /// None took it and some said "try again" (the earliest may be tried after this long).
    case retry(after: Duration?)
    /// Refused for good by every target that answered (and not worth retrying).
    case failed
}

/// The push counters at `/metrics`.
struct PushMetrics: Sendable {
    let sent = Metrics.Counter(label: "parley_pushes_sent_total")
    let failed = Metrics.Counter(label: "parley_pushes_failed_total")
    let retried = Metrics.Counter(label: "parley_push_retries_total")
    let subscriptionsRemoved = Metrics.Counter(label: "parley_push_targets_removed_total")
    /// Users whose stream has events no push has covered yet.
    let queued = Metrics.Gauge(label: "parley_push_queued_users")
}

/// The push services the server talks to: Web Push always, APNs when configured.
struct PushTransports: Sendable {
    let webPush: WebPushSender
    let apns: APNsSender?
    /// Targets that said "try again" lately, and how long they rest (its rules).
    let backoff = PushTargetBackoff()

    /// What one target made of a push.
    private enum TargetOutcome: Sendable {
        case sent
        /// "Try again": the target rests this long (``PushTargetBackoff`` rule 1), or was resting.
        case resting(Duration)
        case failed
    }

    /// Sends `payload` to every target at once (a slow push service holds only its own request)
    /// and folds the answers: a push any target took is sent, and the targets that said "try
    /// again" rest without holding the others back (``PushTargetBackoff`` rule 2); when none took
    /// it, any "try again" means the user's push is retried, after the earliest rest. Gone targets
    /// are removed.
    ///
    /// Only `message` pushes carry the conversation's Web Push `Topic`: a push service keeps the
    /// newest push of a topic for a browser that is away, and an `update` with the same topic would
    /// replace the message it updates, which the browser, back, would then never show.
    func send(_ payload: PushPayload, to targets: PushTargets, store: any ParleyStore, metrics: PushMetrics, logger: Logger) async -> PushSendResult {
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(payload))
        } catch {
            return .failed
        }
        let alert = payload.kind == .message
        return await withTaskGroup(of: TargetOutcome.self) { group in
            for subscription in targets.web {
                group.addTask {
                    await resting(subscription.endpoint) {
                        guard let endpoint = URL(string: subscription.endpoint) else { return .failed }
                        let target = WebPushSubscription(endpoint: endpoint, p256dh: subscription.p256dh, auth: subscription.auth)
                        let outcome: WebPushSender.Outcome
                        do {
                            outcome = try await webPush.send(
                                body, to: target, topic: alert ? payload.conversationId.rawValue : nil, urgency: alert ? .high : .normal,
                                timeToLive: 86_400)
                        } catch {
                            logger.warning("A Web Push could not be encrypted", metadata: ["error": "\(error)"])
                            return .failed
                        }
                        switch outcome {
                        case .delivered:
                            metrics.sent.increment()
                            return .sent
                        case .subscriptionGone:
                            try? await store.dropPushSubscription(endpoint: subscription.endpoint)
                            metrics.subscriptionsRemoved.increment()
                            return .sent
                        case .endpointInside:
                            try? await store.dropPushSubscription(endpoint: subscription.endpoint)
                            metrics.subscriptionsRemoved.increment()
                            logger.notice(
                                "A push endpoint's name resolves inside the server's networks; its subscription was removed",
                                metadata: ["host": "\(endpoint.host ?? "")"])
                            return .failed
                        case .retry(let after): return .resting(backoff.failed(subscription.endpoint, retryAfter: after))
                        case .refused(let status):
                            logger.notice("A push service refused a push", metadata: ["status": "\(status)", "host": "\(endpoint.host ?? "")"])
                            return .failed
                        }
                    }
                }
            }
            if let apns {
                for device in targets.apple {
                    group.addTask {
                        await resting("apns:" + device.token) {
                            switch await apns.send(payload, to: device) {
                            case .delivered:
                                metrics.sent.increment()
                                return .sent
                            case .deviceGone:
                                try? await store.dropAPNsToken(device.token)
                                metrics.subscriptionsRemoved.increment()
                                return .sent
                            case .retry(let after): return .resting(backoff.failed("apns:" + device.token, retryAfter: after))
                            case .refused(let status, let reason):
                                logger.notice("APNs refused a push", metadata: ["status": "\(status)", "reason": "\(reason)"])
                                return .failed
                            }
                        }
                    }
                }
            }
            var (anySent, anyTargets, failed) = (false, false, false)
            var earliest: Duration?
            for await outcome in group {
                anyTargets = true
                switch outcome {
                case .sent: anySent = true
                case .resting(let rest): earliest = min(earliest ?? rest, rest)
                case .failed: failed = true
                }
            }
            if anySent || !anyTargets { return .sent }
            if let earliest { return .retry(after: earliest) }
            return failed ? .failed : .sent
        }
    }

    /// `send`'s answer for `target`, unless it rests (``PushTargetBackoff`` rule 2); a delivery ends its rest.
    private func resting(_ target: String, send: () async -> TargetOutcome) async -> TargetOutcome {
        if let rest = backoff.remaining(target) { return .resting(rest) }
        let outcome = await send()
        if case .sent = outcome { backoff.delivered(target) }
        return outcome
    }

    func shutdown() async {
        try? await webPush.client.shutdown()
        await webPush.pinnedClients.shutdown()
        await apns?.shutdown()
    }
}
