import ParleyCore

/// The frames of the delivery workload, written and read without Foundation: `JSONEncoder` and
/// Foundation's substring search each took a tenth of the load generator's CPU, which the server,
/// sharing the cores, then lacked.
public enum BenchFrames {
    /// A `send` frame exactly as `WireFormat` encodes it (sorted keys). Ids and the payload need no
    /// escaping.
    public static func sendFrame(clientId: ClientMessageID, conversation: ConversationID, payload: BenchPayload) -> String {
        #"{"clientId":""# + clientId.rawValue + #"","conversationId":""# + conversation.rawValue
            + #"","text":""# + payload.text + #"","type":"send"}"#
    }

    /// The text of a warm-up send: no payload, so its answer and its delivery are not counted.
    public static let warmUpText = "warm-up"

    /// A `send` frame of the warm-up (``MessageBench/Options/warmUpSeconds``).
    public static func warmUpFrame(clientId: ClientMessageID, conversation: ConversationID) -> String {
        #"{"clientId":""# + clientId.rawValue + #"","conversationId":""# + conversation.rawValue
            + #"","text":""# + warmUpText + #"","type":"send"}"#
    }

    /// The bench payload of a `message` or `sent` frame, found in its bytes without decoding the
    /// frame and parsed by ``BenchPayload/init(text:)``; `nil` unless it is one.
    public static func payload(in frame: String) -> BenchPayload? {
        var frame = frame
        return frame.withUTF8 { bytes -> BenchPayload? in
            // A plain byte loop: the standard library's generic `firstRange(of:)` took the generator
            // from ~54 to ~92 µs of CPU per message at the 5k rung.
            let marker = payloadMarker
            guard bytes.count > marker.count else { return nil }
            var start = 0
            search: while start <= bytes.count - marker.count {
                for offset in 0..<marker.count where bytes[start + offset] != marker[offset] {
                    start += 1
                    continue search
                }
                let numbers = start + marker.count
                guard let close = bytes[numbers...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return BenchPayload(text: "bench " + String(decoding: bytes[numbers..<close], as: UTF8.self))
            }
            return nil
        }
    }

    private static let payloadMarker = Array(#""text":"bench "#.utf8)
}
