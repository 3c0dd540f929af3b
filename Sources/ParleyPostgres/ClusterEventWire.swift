import Foundation
import ParleyCore
import ParleyStore

/// Events carried whole in a notification (`e`), so a receiving node delivers them without
/// reading them back from the store.
///
/// Body: `{"event":{<kind>:<value>},"to":{"<user>":<position>,…}}`, one event and the streams it
/// went to at their positions; `<kind>` is one of ``Kind``, `<value>` the event's JSON as clients
/// see it (a ``Message``, a ``ReceiptUpdate``, …). `parley_send` and `parley_receipt` write the
/// same shape in SQL (``PostgresCarriedEvents``).
///
/// Rules:
/// 1. Same content as the store: a payload describes exactly the events its transaction committed.
/// 2. It fits or it is not carried: an event whose payload would pass ``ClusterWire/maxBytes``
///    even with one recipient goes as `s` positions instead, and a long recipient list is split
///    over several payloads, each carrying the event, but only for an event of at most
///    ``largestRepeated`` bytes: a long text to a big group would otherwise take hundreds of
///    notifications where its positions take a few.
/// 3. Order: payloads go out in the order of each event's first delivery, so a connection mostly
///    meets its positions in order; one that meets a gap reads the store up to it (as for its own
///    node's events), and then skips the carried events it already has.
extension ClusterWire {
    /// The largest event carried in more than one payload (bytes of JSON).
    static let largestRepeated = 1_500

    static func eventPayloads(_ deliveries: [Delivery], node: String) -> [String] {
        var order: [StreamEvent.Payload] = []
        var streams: [StreamEvent.Payload: [(UserID, Int64)]] = [:]
        for delivery in deliveries {
            if streams[delivery.event.payload] == nil { order.append(delivery.event.payload) }
            streams[delivery.event.payload, default: []].append((delivery.recipient, delivery.event.position))
        }
        var payloads: [String] = []
        var uncarried: [UserID: Int64] = [:]
        for event in order {
            let recipients = streams[event] ?? []
            guard let json = try? WireFormat.encoder().encode(CarriedEvent(event)) else {
                for (user, position) in recipients { uncarried[user] = max(uncarried[user] ?? 0, position) }
                continue
            }
            let prefix = "e \(node) {\"event\":" + String(decoding: json, as: UTF8.self) + ",\"to\":{"
            // A user id (36), its quotes, a colon, a position and a comma; the closing "}}".
            let fitsOnce = prefix.utf8.count + 60 * recipients.count + 2 <= maxBytes
            guard prefix.utf8.count + 60 + 2 <= maxBytes, fitsOnce || json.count <= largestRepeated else {
                for (user, position) in recipients { uncarried[user] = max(uncarried[user] ?? 0, position) }
                continue
            }
            var current = prefix
            var inCurrent = Set<UserID>()
            for (user, position) in recipients {
                if !inCurrent.isEmpty, current.utf8.count + 60 + 2 > maxBytes || inCurrent.contains(user) {
                    payloads.append(current + "}}")
                    current = prefix
                    inCurrent = []
                }
                current += (inCurrent.isEmpty ? "" : ",") + "\"\(user.rawValue)\":\(position)"
                inCurrent.insert(user)
            }
            if !inCurrent.isEmpty { payloads.append(current + "}}") }
        }
        return payloads + streamPayloads(uncarried, node: node)
    }

    /// The signal of an `e` body: its deliveries; only the positions when the event is of a kind
    /// this node does not know (a newer node's), so its streams still catch up; nil when it is
    /// not an `e` body.
    static func decodeEvents(_ body: Substring) -> ClusterSignal? {
        // One pass over the JSON: the payload is read once, its event decoded from that reading.
        guard let decoded = try? JSONDecoder().decode(Body.self, from: Data(body.utf8)) else { return nil }
        var heads: [UserID: Int64] = [:]
        for (user, position) in decoded.to {
            guard let user = UserID(validating: user) else { return nil }
            heads[user] = position
        }
        guard let event = decoded.event else { return .streamsMoved(heads) }
        let deliveries = heads.sorted { $0.value < $1.value }.map { user, position in
            Delivery(recipient: user, event: StreamEvent(position: position, payload: event.payload))
        }
        return .events(deliveries)
    }

    /// An `e` body; `event` is nil when it is of a kind this node does not know.
    private struct Body: Decodable {
        var to: [String: Int64]
        var event: CarriedEvent?

        enum CodingKeys: String, CodingKey { case to, event }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            to = try container.decode([String: Int64].self, forKey: .to)
            event = try? container.decode(CarriedEvent.self, forKey: .event)
        }
    }
}

/// A stream event's payload as one key naming its kind (the kinds of ``StreamEvent/Payload``).
struct CarriedEvent: Codable {
    var payload: StreamEvent.Payload

    init(_ payload: StreamEvent.Payload) { self.payload = payload }

    enum Kind: String, CodingKey {
        case message, receipt, conversation, invitation, receiptSummary, messageUpdated, messageHidden
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Kind.self)
        guard container.allKeys.count == 1, let kind = container.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "one event kind expected"))
        }
        payload =
            switch kind {
            case .message: .message(try container.decode(Message.self, forKey: kind))
            case .receipt: .receipt(try container.decode(ReceiptUpdate.self, forKey: kind))
            case .conversation: .conversation(try container.decode(ConversationInfo.self, forKey: kind))
            case .invitation: .invitation(try container.decode(Invitation.self, forKey: kind))
            case .receiptSummary: .receiptSummary(try container.decode(ReceiptSummary.self, forKey: kind))
            case .messageUpdated: .messageUpdated(try container.decode(Message.self, forKey: kind))
            case .messageHidden: .messageHidden(try container.decode(MessageRef.self, forKey: kind))
            }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Kind.self)
        switch payload {
        case .message(let message): try container.encode(message, forKey: .message)
        case .receipt(let receipt): try container.encode(receipt, forKey: .receipt)
        case .conversation(let info): try container.encode(info, forKey: .conversation)
        case .invitation(let invitation): try container.encode(invitation, forKey: .invitation)
        case .receiptSummary(let summary): try container.encode(summary, forKey: .receiptSummary)
        case .messageUpdated(let message): try container.encode(message, forKey: .messageUpdated)
        case .messageHidden(let ref): try container.encode(ref, forKey: .messageHidden)
        }
    }
}
