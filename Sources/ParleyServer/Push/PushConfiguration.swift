/// Where and how the server pushes notifications.
public struct PushConfiguration: Sendable {
    /// The VAPID key's PEM file (made on first start); `nil` keeps the key in the database, shared
    /// by every node of a cluster.
    public var vapidKeyFile: String?
    /// The VAPID `sub` claim: a `mailto:` or `https:` contact push services can reach.
    public var vapidSubject = "mailto:admin@parley.invalid"
    /// Tests and local development only: Web Push endpoints may be `http://` on a loopback address.
    public var allowLoopbackEndpoints = false
    /// Web Push subscriptions (and APNs devices) a user may keep; the oldest goes.
    public var maxTargetsPerUser = 10
    /// How often each node looks for users with pushes due.
    public var pollInterval: Duration = .milliseconds(500)
    /// How long a node holds a user it is pushing for before another may take over.
    public var leaseSeconds: Double = 60
    /// How long one request to a push service may take, its answer's body included.
    public var requestTimeout: Duration = .seconds(15)
    /// Attempts ("try again" answers) before a user's pushes are given up.
    public var maxAttempts = 10
    /// APNs, when configured.
    public var apns: APNsConfiguration?
    /// How a Web Push endpoint's host name is looked up (``PushHostCheck``): the system's resolver;
    /// tests give names of their own.
    var resolveHost: PushHostCheck.Resolve = PushHostCheck.systemResolve

    public init() {}
}

/// An APNs provider token's setup (an Apple Developer `.p8` key).
public struct APNsConfiguration: Sendable {
    /// The `.p8` file: a PEM P-256 private key.
    public var keyFile: String
    public var keyID: String
    public var teamID: String
    /// The app's bundle id (`apns-topic`).
    public var topic: String
    /// Production devices' service; sandbox devices use ``sandboxURL``.
    public var productionURL = "https://api.push.apple.com"
    public var sandboxURL = "https://api.sandbox.push.apple.com"
    /// Extra PEM certificates to trust (a test stand-in's); empty trusts the system's roots.
    public var trustedCertificatesFile: String?

    public init(keyFile: String, keyID: String, teamID: String, topic: String) {
        self.keyFile = keyFile
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
    }
}
