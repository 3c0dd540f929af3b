import Hummingbird
import ParleyCore
import ParleyStore

/// React, edit, delete and hide a message, and an edited message's versions (docs/protocol.md
/// "Message actions"). The WebSocket's `action` frame takes the same path (``Messenger/act``).
struct MessageActionRoutes {
    let store: any ParleyStore
    let messenger: Messenger

    func add(to router: Router<ParleyRequestContext>) {
        router.post("/v1/conversations/:id/messages/:seq/actions") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.MessageActionBody.self, from: request, context: context)
            let (id, seq) = try Self.message(context)
            let outcome = try await messenger.act(
                MessageActionRequest(clientId: body.clientId, conversationId: id, seq: seq, kind: body.kind, emoji: body.emoji, text: body.text),
                by: me)
            return try JSONBody.response(API.MessageActionResponse(message: outcome.message, duplicate: outcome.duplicate))
        }
        router.get("/v1/conversations/:id/messages/:seq/versions") { _, context in
            let me = try context.requireUser()
            let (id, seq) = try Self.message(context)
            return try JSONBody.response(API.MessageVersionsResponse(versions: try await store.versions(in: id, seq: seq, as: me)))
        }
    }

    /// The conversation and seq of the path; a malformed one is "not found", as an unknown one is.
    static func message(_ context: ParleyRequestContext) throws -> (ConversationID, Int64) {
        guard let id = context.parameters.get("id").flatMap(ConversationID.init(validating:)) else { throw StoreError.conversationNotFound }
        guard let seq = context.parameters.get("seq").flatMap(Int64.init), seq >= 1 else { throw StoreError.messageNotFound }
        return (id, seq)
    }
}
