import Foundation
import ParleyCore

/// Decoding of client frames into typed results with the right error code for each failure.
enum WireCoding {
    static func encode(_ frame: ServerFrame) throws -> String {
        String(decoding: try WireFormat.encoder().encode(frame), as: UTF8.self)
    }

    /// Parses a frame's bytes. Invalid UTF-8, bad JSON, unknown types and missing fields each get their own code.
    static func decodeFrame(_ bytes: [UInt8]) -> Result<ClientFrame, ParleyError> {
        guard isUTF8(bytes) else {
            return .failure(ParleyError(.invalidUTF8, "Frames must be valid UTF-8."))
        }
        if let send = PlainSendFrame.read(bytes) { return .success(.send(send)) }
        if let field = ExplicitNull.field(in: bytes, declared: ClientFrame.declaredFields, nested: ClientFrame.nestedDeclaredFields) {
            return .failure(ParleyError(.invalidFrame, ExplicitNull.message(field: field)))
        }
        let data = Data(bytes)
        do {
            return .success(try JSONDecoder().decode(ClientFrame.self, from: data))
        } catch is UnknownFrameType {
            // A fixed message: the type is the client's input, and errors never echo input.
            return .failure(ParleyError(.unknownFrameType, "The frame's type is not one this server knows."))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty && !isJSON(data) {
            // A number that fits no field (1.5 or 2^63 for a seq) is reported here too, with no
            // path: valid JSON of the wrong type, so `invalid_frame`, as a string there would be.
            return .failure(ParleyError(.invalidJSON, "The frame is not valid JSON."))
        } catch {
            return .failure(ParleyError(.invalidFrame, "The frame is missing fields or has fields of the wrong type."))
        }
    }

    /// Whether `data` is JSON at all (read only for a frame that failed to decode).
    static func isJSON(_ data: Data) -> Bool {
        (try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)) != nil
    }

    /// Whether `bytes` are valid UTF-8; ASCII, by far the most common, is checked without decoding.
    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        if !bytes.contains(where: { $0 >= 0x80 }) { return true }
        return String(validating: bytes, as: UTF8.self) != nil
    }

    /// The `ref` of a frame that failed to decode, when it has a readable one, so the error can be matched.
    static func ref(in bytes: [UInt8]) -> String? {
        struct Ref: Decodable { var ref: String? }
        return (try? JSONDecoder().decode(Ref.self, from: Data(bytes)))?.ref
    }
}
