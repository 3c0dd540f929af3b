import ParleyCore
import ParleyStore
import Synchronization

/// The names a push gives senders: the display name, with " (@username)" for a group member whose
/// name reads like another member's (``LookAlikeNames``), as the clients show them. A notification
/// is where an impostor's "send me the code" would be read first, with no chat around it.
///
/// Rules (``PushDeliveryTests/aGroupPushTellsLookAlikeSendersApartByUsername()``):
/// 1. Only senders in groups are looked at; a direct chat's push is titled with the sender's name
///    (the recipient's list tells look-alike direct chats apart).
/// 2. A group's look-alikes are worked out again when its members change (their ids are read for
///    each plan, one indexed query; their names only for a new member list). Names are set at
///    sign-up and never change, so a member list decides.
final class PushSenderNames: Sendable {
    /// Groups whose look-alikes are kept at most.
    static let groupsKept = 1_000
    private let known = Mutex<[ConversationID: (members: [UserID], lookAlikes: Set<UserID>)]>([:])

    /// Each of `senders` by name; `groups`: the groups their messages in this plan are in.
    func names(of senders: Set<UserID>, in groups: Set<ConversationID>, store: any ParleyStore) async throws -> [UserID: String] {
        let users = try await store.users(Array(senders))
        var marked: Set<UserID> = []
        for group in groups { marked.formUnion(try await lookAlikes(in: group, store: store).intersection(senders)) }
        return Dictionary(
            users.map { ($0.id, marked.contains($0.id) ? "\($0.displayName) (@\($0.username))" : $0.displayName) }, uniquingKeysWith: { $1 })
    }

    /// Rule 2.
    private func lookAlikes(in group: ConversationID, store: any ParleyStore) async throws -> Set<UserID> {
        let members = try await store.memberIDs(of: group).sorted { $0.rawValue < $1.rawValue }
        if let cached = known.withLock({ $0[group] }), cached.members == members { return cached.lookAlikes }
        let people = try await store.users(members).map { (id: $0.id, name: $0.displayName) }
        let lookAlikes = LookAlikeNames.ambiguous(people)
        known.withLock { known in
            if known.count >= Self.groupsKept { known.removeAll() }  // a bound, not an LRU: a miss costs one read
            known[group] = (members, lookAlikes)
        }
        return lookAlikes
    }
}
