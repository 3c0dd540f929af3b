import Foundation
import ParleyCore
import ParleyStore

/// The text of Parley's notifications on the one channel every node listens to.
///
/// Each payload is `<kind> <node> <body>`: `s` streams moved (`user:position` pairs) and `e`
/// events carried whole (JSON: ``eventPayloads(_:node:)``), both written by the store inside the
/// committing transaction, `f` an ephemeral frame (JSON: recipients and
/// frame), `r` a user whose sessions were revoked. PostgreSQL caps a payload at 8,000 bytes, so
/// long lists go out in several payloads. Anything malformed is ignored: the store is the truth.
enum ClusterWire {
    static let channel = "parley_cluster"
    static let maxBytes = 7_000
    /// Recipients per frame payload (user ids are 36 bytes).
    static let recipientsPerPayload = 150

    static func payloads(_ signal: ClusterSignal, node: String) -> [String] {
        switch signal {
        case .streamsMoved(let heads):
            return streamPayloads(heads, node: node)
        case .frame(let frame, let recipients):
            return stride(from: 0, to: recipients.count, by: recipientsPerPayload).compactMap { start in
                let chunk = Array(recipients[start..<min(start + recipientsPerPayload, recipients.count)])
                guard let json = try? WireFormat.encoder().encode(FramePayload(to: chunk, frame: frame)) else { return nil }
                let payload = "f \(node) " + String(decoding: json, as: UTF8.self)
                return payload.utf8.count <= maxBytes ? payload : nil
            }
        case .events(let deliveries):
            return eventPayloads(deliveries, node: node)
        case .sessionsRevoked(let user):
            return ["r \(node) \(user.rawValue)"]
        case .usersLeft, .reconnected, .rejoined:
            return []  // local to a node
        }
    }

    static func streamPayloads(_ heads: [UserID: Int64], node: String) -> [String] {
        let prefix = "s \(node)"
        var payloads: [String] = [], current = prefix
        for (user, position) in heads.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let pair = " \(user.rawValue):\(position)"
            if current != prefix, current.utf8.count + pair.utf8.count > maxBytes {
                payloads.append(current)
                current = prefix
            }
            current += pair
        }
        if current != prefix { payloads.append(current) }
        return payloads
    }

    /// The sending node and the signal, or nil for a payload that is not Parley's or that `ownNode`
    /// sent (its body is not read).
    static func decode(_ payload: String, ignoring ownNode: String? = nil) -> (node: String, signal: ClusterSignal)? {
        let parts = payload.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, ownNode.map({ parts[1] != $0 }) ?? true else { return nil }
        let node = String(parts[1]), body = parts[2]
        switch parts[0] {
        case "s":
            var heads: [UserID: Int64] = [:]
            for pair in body.split(separator: " ") {
                guard let colon = pair.lastIndex(of: ":"), let position = Int64(pair[pair.index(after: colon)...]),
                    let user = UserID(validating: String(pair[..<colon]))
                else { continue }
                heads[user] = max(heads[user] ?? 0, position)
            }
            return (node, .streamsMoved(heads))
        case "e":
            return decodeEvents(body).map { (node, $0) }
        case "f":
            guard let decoded = try? JSONDecoder().decode(FramePayload.self, from: Data(body.utf8)) else { return nil }
            return (node, .frame(decoded.frame, recipients: decoded.to))
        case "r":
            guard let user = UserID(validating: String(body)) else { return nil }
            return (node, .sessionsRevoked(user))
        default:
            return nil
        }
    }

    private struct FramePayload: Codable {
        var to: [UserID]
        var frame: ServerFrame
    }
}
