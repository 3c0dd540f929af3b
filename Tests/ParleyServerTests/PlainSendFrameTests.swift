import Foundation
import ParleyCore
@testable import ParleyServer
import Testing

/// `PlainSendFrame` reads the common `send` frame without `JSONDecoder`; whatever it reads,
/// `JSONDecoder` must read the same way (its rule 3), and it must take the frames clients send.
@Suite struct PlainSendFrameTests {
    static func decoded(_ text: String) -> ClientFrame? { try? JSONDecoder().decode(ClientFrame.self, from: Data(text.utf8)) }
    static func read(_ text: String) -> SendRequest? { PlainSendFrame.read(Array(text.utf8)) }

    /// Send frames in the forms clients write them, plus key orders, spacing and every optional
    /// field present or not.
    static func plainFrames() -> [String] {
        let a = UserID.random(), b = UserID.random()
        let conversation = ConversationID.direct(a, b).rawValue
        var frames: [String] = []
        for text in ["hello", "héllo wörld 👋", " padded ", "", "' single quotes ' and / slash", String(repeating: "x", count: 3000)] {
            let encoded = try! WireFormat.encoder().encode(
                ClientFrame.send(SendRequest(ref: "r1", clientId: .random(), conversationId: ConversationID(rawValue: conversation), text: text)))
            frames.append(String(decoding: encoded, as: UTF8.self))
            var fields = [("type", "send"), ("clientId", ClientMessageID.random().rawValue), ("text", text)]
            if text.count.isMultiple(of: 2) { fields.append(("ref", "\(text.count)")) }
            fields.append(text.isEmpty ? ("recipientId", b.rawValue) : ("conversationId", conversation))
            for (order, spacing) in zip(0..<4, ["", " ", "\n\t ", "\r\n"]) {
                let split = order % fields.count
                let rotated: [(String, String)] = Array(fields[split...]) + Array(fields[..<split])
                let pairs: [String] = rotated.map { key, value in "\"" + key + "\"" + spacing + ":" + spacing + "\"" + value + "\"" }
                let body = pairs.joined(separator: spacing + "," + spacing)
                frames.append(spacing + "{" + spacing + body + spacing + "}" + spacing)
            }
        }
        return frames
    }

    @Test func plainSendFramesAreReadAsJSONDecoderReadsThem() {
        let frames = Self.plainFrames()
        for frame in frames {
            let read = Self.read(frame)
            #expect(read != nil, "a plain send frame is read here: \(frame.prefix(120))")
            #expect(read.map(ClientFrame.send) == Self.decoded(frame), "\(frame.prefix(120))")
        }
        #expect(frames.count == 30)
    }

    /// Each changes a plain frame into one this reader leaves to `JSONDecoder` (rule 2): the decoder
    /// then gives either the same request (escapes, unknown keys, null) or an error.
    @Test func everythingElseIsLeftToJSONDecoder() {
        let id = ClientMessageID.random().rawValue
        let plain = #"{"type":"send","clientId":"\#(id)","text":"hi"}"#
        #expect(Self.read(plain) != nil)
        let others = [
            #"{"type":"send","clientId":"\#(id)","text":"a\"b"}"#,  // escape in a value
            #"{"type":"send","clientId":"\#(id)","text":"a\u00e9"}"#,
            #"{"type":"send","clientId":"\#(id)","text":"a\nb"}"#,
            "{\"type\":\"send\",\"clientId\":\"\(id)\",\"text\":\"a\nb\"}",  // raw control character: invalid JSON
            #"{"type":"send","clientId":"\#(id)","text":"hi","ref":null}"#,
            #"{"type":"send","clientId":"\#(id)","text":"hi","extra":"x"}"#,
            #"{"type":"send","clientId":"\#(id)","text":"hi","text":"again"}"#,  // duplicate key
            #"{"type":"send","clientId":"\#(id)","text":"hi","after":1}"#,
            #"{"type":"send","clientId":"\#(id)","text":"hi",}"#,
            #"{"type":"send","clientId":"\#(id)","text":"hi"} x"#,
            #"{"type":"send","clientId":"\#(id)","text":"hi""#,
            #"{"type":"send","clientId":"\#(id)"}"#,
            #"{"type":"send","text":"hi"}"#,
            #"{"type":"ping","clientId":"\#(id)","text":"hi"}"#,
            #"{"type":"Send","clientId":"\#(id)","text":"hi"}"#,
            #"{"t\u0079pe":"send","clientId":"\#(id)","text":"hi"}"#,
            #"[{"type":"send","clientId":"\#(id)","text":"hi"}]"#,
            "", "{}", "{", "\"send\"",
        ]
        var decodedAnyway = 0
        for frame in others {
            #expect(Self.read(frame) == nil, "\(frame)")
            if Self.decoded(frame) != nil { decodedAnyway += 1 }
        }
        // The escapes (3), the null ref, the unknown key, the duplicate (JSONDecoder keeps one), the
        // number under an unknown key, the trailing comma (Foundation allows it), the ping and the
        // escaped key.
        #expect(decodedAnyway == 10)
    }

    @Test func theServerDecodesEitherWayToTheSameFrame() {
        for text in Self.plainFrames() + [#"{"type":"send","clientId":"c","text":"a\"b","ref":"r"}"#] {
            let frame: ClientFrame? = try? WireCoding.decodeFrame(Array(text.utf8)).get()
            #expect(frame != nil)
            #expect(frame == Self.decoded(text))
        }
        // An explicit null is refused on either path, never read as an absent field (docs/protocol.md).
        let null = WireCoding.decodeFrame(Array(#"{"type":"send","clientId":"c","text":"a\"b","ref":null}"#.utf8))
        #expect(throws: ParleyError.self) { try null.get() }
        let nested = WireCoding.decodeFrame(Array(#"{"type":"send","clientId":"c","text":"x","attachments":[{"uploadId":"u","thumbnail":null}]}"#.utf8))
        #expect(throws: ParleyError.self) { try nested.get() }
        #expect(throws: ParleyError.self) { try WireCoding.decodeFrame([0x7B, 0xFF, 0x7D]).get() }
    }
}
