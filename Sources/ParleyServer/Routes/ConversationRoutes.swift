import Hummingbird
import ParleyCore
import ParleyStore

/// Conversations, history, sends and receipts.
struct ConversationRoutes {
    let store: any ParleyStore
    let hub: ConnectionHub
    let messenger: Messenger

    func add(to router: Router<ParleyRequestContext>) {
        router.get("/v1/conversations") { request, context in
            let me = try context.requireUser()
            let query = QueryReader(request: request)
            let limit = try query.int("limit", default: 30, range: 1...100)
            let before = try query.string("before").map(Self.parseCursor)
            let page = try await store.conversations(of: me, limit: limit + 1, before: before)
            let conversations = try await withPresence(Array(page.prefix(limit)))
            let next = page.count > limit ? conversations.last.map(Self.cursor(after:)) : nil
            return try JSONBody.response(API.ConversationList(conversations: conversations, nextCursor: next))
        }
        router.post("/v1/conversations") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.CreateConversationRequest.self, from: request, context: context)
            guard let other = UserID(validating: body.userId.rawValue), try await store.user(other) != nil else {
                throw StoreError.userNotFound
            }
            let outcome = try await messenger.startConversation(me, with: other)
            return try JSONBody.response(try await withPresence([outcome.conversation])[0], status: outcome.created ? .created : .ok)
        }
        router.get("/v1/conversations/:id") { _, context in
            let me = try context.requireUser()
            return try JSONBody.response(try await withPresence([try await store.conversation(try conversationID(context), as: me)])[0])
        }
        router.get("/v1/conversations/:id/messages") { request, context in
            let me = try context.requireUser()
            let query = QueryReader(request: request)
            let history = HistoryQuery(
                limit: try query.int("limit", default: 50, range: 1...200), before: try query.seq("before"), after: try query.seq("after"))
            let page = try await store.messages(in: try conversationID(context), as: me, query: history)
            return try JSONBody.response(page)
        }
        router.post("/v1/conversations/:id/receipts") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(API.ReceiptRequest.self, from: request, context: context)
            let receipt = try await messenger.updateReceipt(
                try conversationID(context), member: me, deliveredSeq: body.deliveredSeq, readSeq: body.readSeq)
            return try JSONBody.response(receipt)
        }
        router.post("/v1/messages") { request, context in
            let me = try context.requireUser()
            let body = try await JSONBody.decode(SendRequest.self, from: request, context: context)
            let outcome = try await messenger.send(body, from: me)
            return try JSONBody.response(
                API.SendResponse(message: outcome.message, duplicate: outcome.duplicate), status: outcome.duplicate ? .ok : .created)
        }
    }

    private func conversationID(_ context: ParleyRequestContext) throws -> ConversationID {
        guard let id = context.parameters.get("id").flatMap(ConversationID.init(validating:)) else {
            throw StoreError.conversationNotFound
        }
        return id
    }

    /// Adds live presence (on any node) to the members of stored summaries that share presence,
    /// with one presence lookup for the whole page.
    private func withPresence(_ summaries: [ConversationSummary]) async throws -> [ConversationSummary] {
        let users = Set(summaries.filter { $0.presenceShared == true }.flatMap { $0.members.map(\.userId) })
        let online = users.isEmpty ? [] : try await hub.onlineAnywhere(among: Array(users))
        return summaries.map { summary in
            var summary = summary
            guard summary.presenceShared == true else { return summary }
            for index in summary.members.indices {
                summary.members[index].online = online.contains(summary.members[index].userId)
            }
            return summary
        }
    }

    /// List cursors are `<last activity ms>~<conversation id>`: opaque to clients, stable under ties.
    static func cursor(after summary: ConversationSummary) -> String {
        "\(summary.lastActivityAt.milliseconds)~\(summary.id.rawValue)"
    }

    static func parseCursor(_ raw: String) throws -> ConversationCursor {
        // Any well-formed cursor is accepted: the id only breaks ties in the order, it is not looked up.
        let parts = raw.split(separator: "~", maxSplits: 1)
        guard parts.count == 2, let ms = Int64(parts[0]), (1...100).contains(parts[1].utf8.count),
            parts[1].utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2D })
        else {
            throw ParleyError(.invalidQuery, "'before' is not a cursor this server issued.")
        }
        return ConversationCursor(lastActivityAt: Timestamp(milliseconds: ms), id: ConversationID(rawValue: String(parts[1])))
    }
}
