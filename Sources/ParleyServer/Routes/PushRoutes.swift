import Foundation
import Hummingbird
import ParleyCore
import ParleyStore

/// Push targets and notification settings (docs/protocol.md "Notifications").
struct PushRoutes {
    let store: any ParleyStore
    let vapid: VAPIDKey
    let configuration: PushConfiguration

    func add(to router: Router<ParleyRequestContext>) {
        router.get("/v1/push/config") { _, context in
            _ = try context.requireUser()
            return try JSONBody.response(API.PushConfig(vapidPublicKey: vapid.publicKey, apns: configuration.apns != nil))
        }
        router.post("/v1/push/subscriptions") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.WebPushSubscriptionBody.self, from: request, context: context)
            let record = try Self.subscription(body, allowLoopback: configuration.allowLoopbackEndpoints)
            try await store.savePushSubscription(record, for: me, limit: configuration.maxTargetsPerUser)
            return Response(status: .noContent)
        }
        router.delete("/v1/push/subscriptions") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.WebPushUnsubscribeBody.self, from: request, context: context)
            // An endpoint with a control character was never saved (and PostgreSQL refuses NUL in text).
            guard !Validation.holdsControlCharacters(body.endpoint), try await store.deletePushSubscription(endpoint: body.endpoint, of: me) else {
                throw ParleyError(.notFound, "No such push subscription.")
            }
            return Response(status: .noContent)
        }
        router.put("/v1/push/apns-tokens/:token") { request, context in
            let me = try context.requireUser()
            let token = try Self.deviceToken(context)
            let body = try await JSONBody.decode(API.APNsTokenBody.self, from: request, context: context)
            try await store.saveAPNsToken(
                APNsDeviceRecord(token: token, sandbox: body.environment == .sandbox, createdAt: .now()), for: me,
                limit: configuration.maxTargetsPerUser)
            return Response(status: .noContent)
        }
        router.delete("/v1/push/apns-tokens/:token") { _, context in
            let me = try context.requireUser()
            guard try await store.deleteAPNsToken(try Self.deviceToken(context), of: me) else {
                throw ParleyError(.notFound, "No such device token.")
            }
            return Response(status: .noContent)
        }
        router.get("/v1/notifications") { _, context in
            try JSONBody.response(try await current(of: try context.requireUser()))
        }
        router.put("/v1/notifications") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(NotificationPreviewChange.self, from: request, context: context)
            try await store.setNotificationPreview(body.preview, for: me)
            return try JSONBody.response(try await current(of: me))
        }
        router.put("/v1/conversations/:id/notifications") { request, context in
            let me = try context.requireUser()
            guard let id = context.parameters.get("id").flatMap(ConversationID.init(validating:)) else { throw StoreError.conversationNotFound }
            let change = try await JSONBody.decode(ConversationNotificationChange.self, from: request, context: context)
            guard change.level != nil || change.mute != nil else {
                throw ParleyError(.invalidNotificationSetting, "Give a level (all, mentions, none), a mute (8h, 1w, always, off) or both.")
            }
            return try JSONBody.response(try await store.changeNotificationSetting(change, in: id, for: me, now: .now()))
        }
    }

    /// The settings as `GET /v1/notifications` shows them: mutes that ran out are left out.
    private func current(of user: UserID) async throws -> NotificationSettings {
        var settings = try await store.notificationSettings(of: user)
        let now = Timestamp.now()
        settings.conversations = settings.conversations.compactMap { setting in
            var setting = setting
            if let until = setting.mutedUntil, until <= now { setting.mutedUntil = nil }
            return setting.isDefault(at: now) ? nil : setting
        }
        return settings
    }

    /// A subscription's endpoint and keys, checked: the endpoint by ``WebPushEndpoint``, the keys as
    /// the sizes RFC 8291 fixes (a 65-byte uncompressed point that is on the curve, a 16-byte secret).
    static func subscription(_ body: API.WebPushSubscriptionBody, allowLoopback: Bool) throws -> PushSubscriptionRecord {
        guard WebPushEndpoint.validate(body.endpoint, allowLoopbackHTTP: allowLoopback) != nil else {
            throw ParleyError(.invalidPushSubscription, "The endpoint must be an https:// URL of a public push service.")
        }
        guard let p256dh = Base64URL.decode(body.keys.p256dh), p256dh.count == 65, WebPushEncryption.isValidPublicKey(p256dh),
            let auth = Base64URL.decode(body.keys.auth), auth.count == 16
        else {
            throw ParleyError(.invalidPushSubscription, "keys.p256dh must be a P-256 public key and keys.auth 16 bytes, base64url.")
        }
        return PushSubscriptionRecord(endpoint: body.endpoint, p256dh: p256dh, auth: auth, createdAt: .now())
    }

    /// An APNs device token: 32 to 100 bytes of hex (Apple's are 32 today), kept in lower case.
    static func deviceToken(_ context: ParleyRequestContext) throws -> String {
        guard let raw = context.parameters.get("token"), (64...200).contains(raw.count), raw.count.isMultiple(of: 2),
            raw.allSatisfy(\.isHexDigit), raw.allSatisfy(\.isASCII)
        else { throw ParleyError(.invalidPushSubscription, "A device token is 64 to 200 hexadecimal digits.") }
        return raw.lowercased()
    }
}
