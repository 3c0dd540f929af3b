import Hummingbird
import ParleyCore
import ParleyStore

/// Groups: create, membership, roles, title, invitations and message info (docs/protocol.md "Groups").
struct GroupRoutes {
    let groups: GroupService
    var store: any ParleyStore { groups.store }

    func add(to router: Router<ParleyRequestContext>) {
        router.post("/v1/groups") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.CreateGroupRequest.self, from: request, context: context)
            let (outcome, conversation) = try await groups.create(body, by: me)
            return try Self.answer(outcome, conversation: conversation, invited: true)
        }
        router.post("/v1/conversations/:id/members") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.AddMembersRequest.self, from: request, context: context)
            let users = try groups.userIDs(body.userIds)
            let outcome = try await groups.change(
                try Self.id(context), .add(users, shareHistory: body.shareHistory ?? false), clientId: body.clientId, by: me)
            return try Self.answer(outcome, invited: true)
        }
        router.post("/v1/conversations/:id/members/:memberId/remove") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.GroupActionRequest.self, from: request, context: context)
            let outcome = try await groups.change(try Self.id(context), .remove(try Self.member(context)), clientId: body.clientId, by: me)
            return try Self.answer(outcome)
        }
        router.post("/v1/conversations/:id/members/:memberId/role") { request, context in
            let me = try context.requireUser()
            // The role is read as text so that an unknown one is `invalid_role`, not malformed JSON.
            let body = try await JSONBody.decode(RoleChange.self, from: request, context: context)
            guard let role = MemberRole(rawValue: body.role) else { throw StoreError.invalidRole }
            let outcome = try await groups.change(try Self.id(context), .setRole(try Self.member(context), role), clientId: body.clientId, by: me)
            return try Self.answer(outcome)
        }
        router.post("/v1/conversations/:id/leave") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.GroupActionRequest.self, from: request, context: context)
            return try Self.answer(try await groups.change(try Self.id(context), .leave, clientId: body.clientId, by: me))
        }
        router.post("/v1/conversations/:id/title") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.RenameGroupRequest.self, from: request, context: context)
            let title = try Validation.groupTitle(body.title).get()
            return try Self.answer(try await groups.change(try Self.id(context), .rename(title), clientId: body.clientId, by: me))
        }
        router.get("/v1/conversations/:id/messages/:seq/info") { _, context in
            let me = try context.requireUser()
            guard let id = ConversationID(validating: try Self.id(context)) else { throw StoreError.conversationNotFound }
            guard let seq = context.parameters.get("seq").flatMap(Int64.init), seq >= 1 else { throw StoreError.messageNotFound }
            return try JSONBody.response(try await store.messageInfo(in: id, seq: seq, as: me))
        }
        router.get("/v1/invitations") { _, context in
            let me = try context.requireUser()
            return try JSONBody.response(API.InvitationList(invitations: try await store.invitations(of: me)))
        }
        router.post("/v1/invitations/:id/accept") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.GroupActionRequest.self, from: request, context: context)
            let outcome = try await groups.change(try Self.id(context), .accept, clientId: body.clientId, by: me)
            return try Self.answer(outcome, conversation: try await store.conversation(outcome.conversationId, as: me))
        }
        router.post("/v1/invitations/:id/decline") { _, context in
            let me = try context.requireUser()
            try await groups.decline(try Self.id(context), by: me)
            return Response(status: .noContent)
        }
    }

    /// 201 with what was written, or 200 with the original for a retry.
    /// `invited` is listed (possibly empty) for a create or an add.
    private static func answer(_ outcome: GroupOutcome, conversation: ConversationSummary? = nil, invited: Bool = false) throws -> Response {
        let body = API.GroupActionResponse(
            conversation: conversation, entry: outcome.entry, invited: invited ? outcome.invited : nil, duplicate: outcome.duplicate)
        return try JSONBody.response(body, status: outcome.duplicate ? .ok : .created)
    }

    private static func id(_ context: ParleyRequestContext) throws -> String {
        guard let id = context.parameters.get("id") else { throw StoreError.conversationNotFound }
        return id
    }

    private static func member(_ context: ParleyRequestContext) throws -> UserID {
        guard let raw = context.parameters.get("memberId"), let id = UserID(validating: raw) else { throw StoreError.memberNotFound }
        return id
    }
}

/// `API.ChangeRoleRequest` with its role as text (checked by the route).
private struct RoleChange: Decodable, DeclaredFields {
    static let declaredFields: Set<String> = ["clientId", "role"]
    var clientId: ClientMessageID
    var role: String
}
