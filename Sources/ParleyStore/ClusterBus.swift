import ParleyCore

/// What the nodes of a cluster tell each other. The store stays the truth: a signal only says
/// where to look, so a lost one delays something (until ``ClusterSignal/reconnected`` or the next
/// signal), never loses it. Ephemeral frames (typing, presence) are best effort, as on one node.
public enum ClusterSignal: Sendable, Equatable {
    /// Events were committed to these users' streams, up to these positions (sent by the store in
    /// the committing transaction, so also for commits of nodes that died right after).
    case streamsMoved([UserID: Int64])
    /// Events committed to these streams, carried whole (also sent by the store on commit): a node
    /// delivers them as it does its own, and a connection that finds a gap before one fills it
    /// from the store. Sent instead of ``streamsMoved(_:)`` when the events fit a signal.
    case events([Delivery])
    /// An ephemeral frame for these users' live connections (typing, presence).
    case frame(ServerFrame, recipients: [UserID])
    /// Some of this user's sessions were revoked: connections signed in with them must end.
    case sessionsRevoked(UserID)
    /// These users' only connections were on a node that stopped heartbeating: they are offline.
    case usersLeft([UserID])
    /// This node's link to the other nodes was down and is back: it may have missed anything.
    case reconnected
    /// This node was taken for dead (its heartbeat expired during a stall) and is back: its presence
    /// counts were dropped and must be restored (``ClusterBus/restore(_:)``).
    case rejoined
}

/// Cross-node fan-out and cluster-wide presence. One node alone needs none (the server runs
/// without a bus); PostgreSQL provides one with LISTEN/NOTIFY and a presence table.
///
/// Presence rules: a user is online while any live node counts a connection of theirs. Opening
/// and closing report whether this was the user's first or last connection in the whole cluster,
/// decided under a per-user lock so two nodes cannot both miss the last close. A node that stops
/// heartbeating for the expiry is dropped with its counts, and its users with no connection
/// elsewhere arrive as ``ClusterSignal/usersLeft(_:)`` on one surviving node.
public protocol ClusterBus: Sendable {
    /// Sends a signal to every other node, in the order given; never blocks.
    func broadcast(_ signal: ClusterSignal)
    /// Signals from other nodes, for one consumer, in order.
    var signals: AsyncStream<ClusterSignal> { get }
    /// Counts a new connection of `user` on this node; true when it is their first in the cluster.
    func connectionOpened(_ user: UserID) async throws -> Bool
    /// Counts a closed connection; true when it was the user's last in the cluster.
    func connectionClosed(_ user: UserID) async throws -> Bool
    /// Sets this node's counts to `connections` (after ``ClusterSignal/rejoined``); returns the users
    /// who were offline everywhere until now.
    func restore(_ connections: [UserID: Int]) async throws -> [UserID]
    /// Removes this node's counts of users for whom `isLiveHere` (asked under the user's presence
    /// lock) says no connection is open here: a close whose count could not be written (the
    /// database was away) must not keep its user online. Returns the users now offline everywhere.
    func dropStalePresence(isLiveHere: @escaping @Sendable (UserID) -> Bool) async throws -> [UserID]
    /// The users, among `users`, with a connection on some live node.
    func online(among users: [UserID]) async throws -> Set<UserID>
    /// Runs until cancelled or shut down: listening, sending, heartbeats. Leaves the cluster on exit.
    func run() async throws
}
