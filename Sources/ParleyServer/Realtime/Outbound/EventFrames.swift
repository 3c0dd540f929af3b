import Foundation
import ParleyCore

/// A stream event's frame for one recipient: the whole frame's bytes, which every recipient of the
/// same frame shares.
struct EncodedEvent: Sendable {
    let position: Int64
    let frame: TextFrameBytes
    /// The position before it in the recipient's stream (``Delivery/previous``).
    var previous: Int64

    init(position: Int64, frame: TextFrameBytes, previous: Int64? = nil) {
        self.position = position
        self.frame = frame
        self.previous = previous ?? position - 1
    }

    init(position: Int64, text: String, previous: Int64? = nil) {
        self.init(position: position, frame: TextFrameBytes(text), previous: previous)
    }

    /// The frame's text (tests read it).
    var text: String { frame.text }
}

/// Where an event sits in its recipient's stream: its position and the one before it.
struct StreamStep: Sendable, Equatable {
    let position: Int64
    let previous: Int64
}

/// Encodes stream-event frames so each payload is encoded once, however many recipients (and
/// positions) it goes to, and a frame once for all the recipients it has the same position for (a
/// group message's). The output is byte-identical to encoding `ServerFrame.event` with
/// ``WireFormat`` (sorted keys), which a test holds it to.
struct EventFrameEncoder {
    private let encoder = WireFormat.encoder()
    private var cache: [StreamEvent.Payload: (kind: String, json: String)] = [:]
    /// The last frame made, for the next recipient of the same event.
    private var last: (event: StreamEvent, encoded: EncodedEvent)?

    mutating func encode(_ event: StreamEvent, previous: Int64? = nil) throws -> EncodedEvent {
        if let last, last.event.position == event.position, last.event.payload == event.payload {
            return EncodedEvent(position: event.position, frame: last.encoded.frame, previous: previous)
        }
        let encoded = EncodedEvent(position: event.position, text: try text(of: event), previous: previous)
        last = (event, encoded)
        return encoded
    }

    private mutating func text(of event: StreamEvent) throws -> String {
        let (kind, json) = try payload(event.payload)
        // Keys in sorted order, as WireFormat writes them: the payload's key sorts after "pos" for
        // receipt and receiptSummary ("summary").
        switch kind {
        case "receipt": return #"{"pos":\#(event.position),"receipt":\#(json),"type":"receipt"}"#
        case "receiptSummary": return #"{"pos":\#(event.position),"summary":\#(json),"type":"receiptSummary"}"#
        case "messageUpdated": return #"{"message":\#(json),"pos":\#(event.position),"type":"messageUpdated"}"#
        case "messageHidden": return #"{"hidden":\#(json),"pos":\#(event.position),"type":"messageHidden"}"#
        default: return #"{"\#(kind)":\#(json),"pos":\#(event.position),"type":"\#(kind)"}"#
        }
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
