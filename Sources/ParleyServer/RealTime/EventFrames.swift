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
        let text = kind == "receipt"
            ? #"{"pos":\#(event.position),"receipt":\#(json),"type":"receipt"}"#
            : #"{"\#(kind)":\#(json),"pos":\#(event.position),"type":"\#(kind)"}"#
        return EncodedEvent(position: event.position, text: text)
    }

    private mutating func payload(_ payload: StreamEvent.Payload) throws -> (kind: String, json: String) {
        if let cached = cache[payload] { return cached }
        let encoded: (String, Data) = switch payload {
        case .message(let message): ("message", try encoder.encode(message))
        case .receipt(let receipt): ("receipt", try encoder.encode(receipt))
        case .conversation(let info): ("conversation", try encoder.encode(info))
        }
        let result = (kind: encoded.0, json: String(decoding: encoded.1, as: UTF8.self))
        cache[payload] = result
        return result
    }
}
