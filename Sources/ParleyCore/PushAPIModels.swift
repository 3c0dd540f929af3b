extension API {
    /// `GET /v1/push/config`: what a client needs to subscribe.
    public struct PushConfig: Hashable, Codable, Sendable {
        /// The server's VAPID public key (`applicationServerKey`): an uncompressed P-256 point, base64url.
        public var vapidPublicKey: String
        /// Whether the server sends to iOS devices (APNs is configured).
        public var apns: Bool

        /// Creates a value.
        public init(vapidPublicKey: String, apns: Bool) {
            self.vapidPublicKey = vapidPublicKey
            self.apns = apns
        }
    }

    /// A browser's `PushSubscription.toJSON()`: `POST /v1/push/subscriptions`.
    public struct WebPushSubscriptionBody: Hashable, Codable, Sendable {
        /// The browser's keys, base64url.
        public struct Keys: Hashable, Codable, Sendable {
            public var p256dh: String
            public var auth: String

            /// Creates a value.
            public init(p256dh: String, auth: String) {
                self.p256dh = p256dh
                self.auth = auth
            }
        }

        public var endpoint: String
        /// The browser's keys. (Its `expirationTime` is not read: unknown fields are ignored.)
        public var keys: Keys

        /// Creates a value.
        public init(endpoint: String, keys: Keys) {
            self.endpoint = endpoint
            self.keys = keys
        }
    }

    /// `DELETE /v1/push/subscriptions`.
    public struct WebPushUnsubscribeBody: Hashable, Codable, Sendable {
        public var endpoint: String

        /// Creates a value.
        public init(endpoint: String) { self.endpoint = endpoint }
    }

    /// `PUT /v1/push/apns-tokens/{token}`.
    public struct APNsTokenBody: Hashable, Codable, Sendable {
        /// Which APNs service the device's build talks to.
        public enum Environment: String, Hashable, Codable, Sendable {
            case production
            case sandbox
        }

        public var environment: Environment

        /// Creates a value.
        public init(environment: Environment) { self.environment = environment }
    }
}
