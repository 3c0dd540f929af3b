import ParleyCore

/// The `send` frame in its plain form, read straight from its bytes. `JSONDecoder` took 6.5 % of
/// the server's CPU at the maximum send rate, nearly all of it for this one frame.
///
/// Rules:
/// 1. Read here: a JSON object whose values are all strings without escapes or control characters,
///    whose keys are among `type`, `ref`, `clientId`, `conversationId`, `recipientId` and `text`,
///    each at most once, with `"type": "send"`, a `clientId` and a `text`; whitespace where JSON
///    allows it.
/// 2. Anything else gives nil (escapes, `null`, numbers, other keys, other frame types, anything
///    malformed), and the caller decodes the frame with `JSONDecoder`, which gives the frame or the
///    precise error.
/// 3. So whatever is read here, `JSONDecoder` reads as the same ``SendRequest``; a test holds it to
///    that over generated frames. The bytes must be valid UTF-8 (checked before).
enum PlainSendFrame {
    static func read(_ bytes: [UInt8]) -> SendRequest? {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            return scanner.request()
        }
    }

    private static let keys: [[UInt8]] = ["type", "ref", "clientId", "conversationId", "recipientId", "text"].map { Array($0.utf8) }
    private static let send = Array("send".utf8)

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func request() -> SendRequest? {
            guard let values = fields(), let type = values[0], equal(type, PlainSendFrame.send),
                let clientId = values[2], let text = values[5]
            else { return nil }
            return SendRequest(
                ref: values[1].map(string(at:)), clientId: ClientMessageID(rawValue: string(at: clientId)),
                conversationId: values[3].map { ConversationID(rawValue: string(at: $0)) },
                recipientId: values[4].map { UserID(rawValue: string(at: $0)) }, text: string(at: text))
        }

        /// Where each key's string value is, in the order of `keys`; nil unless the whole input is
        /// one object of such strings.
        private mutating func fields() -> [Range<Int>?]? {
            var values: [Range<Int>?] = Array(repeating: nil, count: keys.count)
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return nil }
            repeat {
                skipSpace()
                guard let key = string() else { return nil }
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipSpace()
                guard let value = string(), let slot = keys.firstIndex(where: { equal(key, $0) }), values[slot] == nil else { return nil }
                values[slot] = value
                skipSpace()
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { return nil }
            skipSpace()
            return index == bytes.count ? values : nil
        }

        /// A string's contents, after its opening quote up to its closing one; nil at an escape, a
        /// control character (invalid in JSON) or the end.
        private mutating func string() -> Range<Int>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return start..<(index - 1)
                case UInt8(ascii: "\\"), 0x00..<0x20:
                    return nil
                default:
                    index += 1
                }
            }
            return nil
        }

        private mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private func equal(_ range: Range<Int>, _ expected: [UInt8]) -> Bool {
            range.count == expected.count && zip(bytes[range], expected).allSatisfy { $0 == $1 }
        }

        private func string(at range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
    }
}
