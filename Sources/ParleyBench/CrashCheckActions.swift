import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ParleyCore

/// The message actions a crash-check client makes on its own acknowledged messages, and what the
/// server must show for them once everything is drained (docs/protocol.md "Message actions").
///
/// Rules checked (rule 7 of ``CrashCheck``): every acknowledged action was applied once and in the
/// order written: a message's stored text is its last edit's (empty once deleted), it has exactly
/// one earlier version per edit (none once deleted), the writer's reaction is its last one; and
/// every receiver's copy converged to the stored message. Rule 8: no text of a message deleted
/// for everyone is left in the database file after the server stopped (single node, SQLite).
struct WrittenAction: Sendable {
    var clientId: ClientMessageID
    var conversation: ConversationID
    var seq: Int64
    var kind: MessageActionKind
    var emoji: String?
    var text: String?

    var frame: ClientFrame {
        .action(
            MessageActionRequest(
                ref: clientId.rawValue, clientId: clientId, conversationId: conversation, seq: seq, kind: kind, emoji: emoji, text: text))
    }
}

/// What the acknowledged actions of one client say each of its messages must look like.
struct ExpectedMessageState: Equatable {
    var texts: [String]
    var deleted = false
    var myReaction: String?

    /// The states of the client's messages that actions touched, by seq.
    static func from(_ actions: [WrittenAction], originals: [Int64: String]) -> [Int64: ExpectedMessageState] {
        var states: [Int64: ExpectedMessageState] = [:]
        for action in actions {
            var state = states[action.seq] ?? ExpectedMessageState(texts: [originals[action.seq] ?? ""])
            switch action.kind {
            case .edit: if let text = action.text { state.texts.append(text) }
            case .delete: state.deleted = true
            case .react: state.myReaction = action.emoji
            case .hide: break
            }
            states[action.seq] = state
        }
        return states
    }
}

enum CrashCheckActionRules {
    /// Rule 7 for one client: `stored` is its conversation as the server has it now.
    static func check(client: CrashCheckClient, index: Int, stored: [Message], versions: [Int64: Int]) -> [String] {
        let who = "client \(index)"
        let originals = Dictionary(client.acked.values.map { ($0.seq, $0.text) }, uniquingKeysWith: { first, _ in first })
        var problems: [String] = []
        let bySeq = Dictionary(stored.map { ($0.seq, $0) }, uniquingKeysWith: { first, _ in first })
        for (seq, expected) in ExpectedMessageState.from(client.actions, originals: originals) {
            guard let message = bySeq[seq] else {
                problems.append("\(who): acted on seq \(seq), which is not stored")
                continue
            }
            let text = expected.deleted ? "" : expected.texts.last ?? ""
            if message.text != text || message.isDeleted != expected.deleted {
                problems.append("\(who): seq \(seq) is \"\(message.text.prefix(40))\", its acknowledged actions say \"\(text.prefix(40))\"")
            }
            let earlier = expected.deleted ? 0 : expected.texts.count - 1
            if let count = versions[seq], count != earlier { problems.append("\(who): seq \(seq) has \(count) earlier versions, edited \(earlier) times") }
            let mine = message.reactions?.first { $0.mine }?.emoji
            if !expected.deleted, mine != expected.myReaction {
                problems.append("\(who): seq \(seq) shows reaction \(mine ?? "none"), the last one set was \(expected.myReaction ?? "none")")
            }
        }
        return problems
    }

    /// The number of earlier versions of each message `client` edited.
    static func versions(of client: CrashCheckClient, baseURL: String) async throws -> [Int64: Int] {
        var counts: [Int64: Int] = [:]
        for seq in Set(client.actions.filter { $0.kind == .edit }.map(\.seq)) {
            var request = HTTPClientRequest(url: baseURL + "/v1/conversations/\(client.conversation.rawValue)/messages/\(seq)/versions")
            request.headers.add(name: "Authorization", value: "Bearer \(client.session.token)")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 16 << 20)
            counts[seq] = try JSONDecoder().decode(API.MessageVersionsResponse.self, from: Data(body.readableBytesView)).versions.count
        }
        return counts
    }

    /// Rule 8: texts of messages deleted for everyone still found in the database file.
    static func deletedTextsLeft(in databasePath: String, clients: [CrashCheckClient]) -> [String] {
        guard let file = FileManager.default.contents(atPath: databasePath) else { return ["cannot read \(databasePath)"] }
        let wal = FileManager.default.contents(atPath: databasePath + "-wal") ?? Data()
        var problems: [String] = []
        for client in clients {
            let originals = Dictionary(client.acked.values.map { ($0.seq, $0.text) }, uniquingKeysWith: { first, _ in first })
            for (seq, state) in ExpectedMessageState.from(client.actions, originals: originals) where state.deleted {
                for text in state.texts where file.range(of: Data(text.utf8)) != nil || wal.range(of: Data(text.utf8)) != nil {
                    problems.append("deleted text \"\(text)\" (seq \(seq)) is still in the database file")
                }
            }
        }
        return problems
    }
}
