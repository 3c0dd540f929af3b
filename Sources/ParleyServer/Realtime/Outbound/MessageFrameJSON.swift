import Foundation
import ParleyCore

/// Hand-written JSON for the two frames written for every message: the recipient's `message` event
/// and the sender's `sent` ack. Foundation's `JSONEncoder` was ~9 % of the server's CPU at full
/// load; this writes the same bytes (keys sorted, slashes unescaped: ``WireFormat``) directly, and a
/// test holds it byte-identical to the encoder for every kind of text.
enum MessageFrameJSON {
    /// The message object, as `WireFormat.encoder().encode(message)` writes it.
    static func message(_ message: Message) -> String {
        // Entries, mentions and messages changed by actions are rare: the encoder writes those.
        if message.needsFullEncoder {
            return (try? WireFormat.encoder().encode(message)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
        var out = JSONBytes(capacity: 256 + message.text.utf8.count)
        out.append(message)
        return out.text
    }

    /// A whole `sent` frame, as encoding ``ServerFrame/sent(ref:message:duplicate:position:)`` writes it.
    static func sent(ref: String?, message: Message, duplicate: Bool, position: Int64?) -> String {
        if message.needsFullEncoder {
            let frame = ServerFrame.sent(ref: ref, message: message, duplicate: duplicate, position: position)
            return (try? WireFormat.encoder().encode(frame)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
        var out = JSONBytes(capacity: 320 + message.text.utf8.count + (ref?.utf8.count ?? 0))
        out.raw(#"{"duplicate":"#)
        out.raw(duplicate ? "true" : "false")
        out.raw(#","message":"#)
        out.append(message)
        if let position {
            out.raw(#","pos":"#)
            out.raw(String(position))
        }
        if let ref {
            out.raw(#","ref":"#)
            out.string(ref)
        }
        out.raw(#","type":"sent"}"#)
        return out.text
    }
}

/// A UTF-8 buffer with JSON string escaping as Foundation's writer does it.
private struct JSONBytes {
    private var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    mutating func append(_ message: Message) {
        raw(#"{"clientId":"#)
        string(message.clientId.rawValue)
        raw(#","conversationId":"#)
        string(message.conversationId.rawValue)
        raw(#","createdAt":"#)
        raw(String(message.createdAt.milliseconds))
        raw(#","id":"#)
        string(message.id.rawValue)
        raw(#","senderId":"#)
        string(message.senderId.rawValue)
        raw(#","seq":"#)
        raw(String(message.seq))
        raw(#","text":"#)
        string(message.text)
        bytes.append(UInt8(ascii: "}"))
    }

    /// A quoted string: `"` and `\` escaped, control characters as `\n`-style or `\u00XX`; the
    /// rest (slashes, non-ASCII) as is.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: Array(#"\u00"#.utf8))
                bytes.append(LowercaseHex.digits[Int(byte >> 4)])
                bytes.append(LowercaseHex.digits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension Message {
    /// Whether it has any field the fast path does not write.
    fileprivate var needsFullEncoder: Bool {
        entry != nil || mentions != nil || replyTo != nil || editedAt != nil || deletedAt != nil || reactions != nil || attachments != nil
    }
}
