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

    /// The bench payload of a `message` or `sent` frame, read from its bytes without decoding the
    /// frame; `nil` unless the text is `bench` and three numbers.
    public static func payload(in frame: String) -> BenchPayload? {
        var frame = frame
        return frame.withUTF8 { bytes -> BenchPayload? in
            let marker = payloadMarker
            guard bytes.count > marker.count else { return nil }
            var start = 0
            search: while start <= bytes.count - marker.count {
                for offset in 0..<marker.count where bytes[start + offset] != marker[offset] {
                    start += 1
                    continue search
                }
                break
            }
            guard start <= bytes.count - marker.count else { return nil }
            // Three decimal numbers separated by single spaces, ended by the closing quote.
            var numbers: [UInt64] = [], current: UInt64 = 0, digits = 0
            for byte in bytes[(start + marker.count)...] {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9") where digits < 19:
                    current = current * 10 + UInt64(byte - UInt8(ascii: "0"))
                    digits += 1
                case UInt8(ascii: " "), UInt8(ascii: "\""):
                    guard digits > 0 else { return nil }
                    numbers.append(current)
                    (current, digits) = (0, 0)
                    if byte == UInt8(ascii: "\"") {
                        guard numbers.count == 3, numbers[0] <= UInt64(Int.max), numbers[1] <= UInt64(Int.max) else { return nil }
                        return BenchPayload(sender: Int(numbers[0]), number: Int(numbers[1]), sentAtMicros: numbers[2])
                    }
                default:
                    return nil
                }
            }
            return nil
        }
    }

    private static let payloadMarker = Array(#""text":"bench "#.utf8)
}
