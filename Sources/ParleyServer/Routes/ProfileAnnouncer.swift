import Logging
import ParleyCore
import ParleyStore

/// Tells everyone who sees a user who they are now, once a change to their profile (a photo, a
/// display name) is committed: a `profile` frame with the user as now, through the hub (every
/// node), to their peers (``ProfilePhotoStore/peers(of:)``) and their own connections (their other
/// devices). It is ephemeral: a client offline then sees the change in what it loads next. A
/// failure to tell is logged; the change stands and is answered.
struct ProfileAnnouncer {
    let store: any ProfilePhotoStore
    let hub: ConnectionHub
    let logger: Logger

    func announce(_ user: User) async {
        do {
            hub.send(.profile(user), to: try await store.peers(of: user.id) + [user.id])
        } catch {
            logger.warning("Could not announce a profile change", metadata: ["user": "\(user.id.rawValue)", "error": "\(error)"])
        }
    }
}
