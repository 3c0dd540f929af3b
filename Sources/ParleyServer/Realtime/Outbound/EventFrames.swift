import Foundation
import ParleyCore

/// A stream event's frame text for one recipient.
struct EncodedEvent: Sendable {
    let position: Int64
    let text: String
}

/// Encodes stream-event frames so each payload is encoded once, however many recipients (and
/// positions) it goes to. The output is byte-identical to encoding `ServerFrame.event` with
/// ``WireFormat`` (sorted keys), which a test holds it to.
struct EventFrameEncoder {
    private let encoder = WireFormat.encoder()
    private var cache: [StreamEvent.Payload: (kind: String, json: String)] = [:]

    mutating func encode(_ event: StreamEvent) throws -> EncodedEvent {
        let (kind, json) = try payload(event.payload)
        // Keys in sorted order, as WireFormat writes them.
        // Keys in sorted order: the payload's key sorts after "pos" for receipt and receiptSummary ("summary").
        let text =
            switch kind {
            case "receipt": #"{"pos":\#(event.position),"receipt":\#(json),"type":"receipt"}"#
            case "receiptSummary": #"{"pos":\#(event.position),"summary":\#(json),"type":"receiptSummary"}"#
            case "messageUpdated": #"{"message":\#(json),"pos":\#(event.position),"type":"messageUpdated"}"#
            case "messageHidden": #"{"hidden":\#(json),"pos":\#(event.position),"type":"messageHidden"}"#
            default: #"{"\#(kind)":\#(json),"pos":\#(event.position),"type":"\#(kind)"}"#
            }
        return EncodedEvent(position: event.position, text: text)
    }

    private mutating func payload(_ payload: StreamEvent.Payload) throws -> (kind: String, json: String) {
        if let cached = cache[payload] { return cached }
        let result: (kind: String, json: String) =
            switch payload {
            case .message(let message): ("message", MessageFrameJSON.message(message))
            case .receipt(let receipt): ("receipt", String(decoding: try encoder.encode(receipt), as: UTF8.self))
            case .conversation(let info): ("conversation", String(decoding: try encoder.encode(info), as: UTF8.self))
            case .invitation(let invitation): ("invitation", String(decoding: try encoder.encode(invitation), as: UTF8.self))
            case .receiptSummary(let summary): ("receiptSummary", String(decoding: try encoder.encode(summary), as: UTF8.self))
            case .messageUpdated(let message): ("messageUpdated", MessageFrameJSON.message(message))
            case .messageHidden(let ref): ("messageHidden", String(decoding: try encoder.encode(ref), as: UTF8.self))
            }
        cache[payload] = result
        return result
    }
}
