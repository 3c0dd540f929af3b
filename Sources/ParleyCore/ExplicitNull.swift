import Foundation

/// Client input never carries `null`: a field is present with a value of its type, or left out.
/// openapi.yaml marks no request field `nullable`, and a decoder that read `null` as "absent" would
/// let a request mean something the API does not say, so REST bodies and WebSocket frames with a
/// `null` anywhere are refused before they are decoded.
public enum ExplicitNull {
    /// The name of the field holding the first `null` in the JSON `bytes` ("" when it has no
    /// plain name, such as an array element), or `nil` when there is none or the bytes are not JSON.
    /// Parses only when the bytes contain `null` at all, so ordinary input costs one scan.
    public static func field(in bytes: [UInt8]) -> String? {
        guard containsNullToken(bytes),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        else { return nil }
        return firstNull(in: object, key: "")
    }

    /// The message to answer with: names the field only when its name is plain (never echoes input).
    public static func message(field: String) -> String {
        let plain = !field.isEmpty && field.count <= 40 && field.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        return plain ? "'\(field)' is null: leave a field out instead of sending null." : "Fields may not be null: leave a field out instead."
    }

    private static func containsNullToken(_ bytes: [UInt8]) -> Bool {
        let token: [UInt8] = Array("null".utf8)
        guard bytes.count >= token.count else { return false }
        for start in 0...(bytes.count - token.count) where bytes[start] == token[0] {
            if bytes[start + 1] == token[1], bytes[start + 2] == token[2], bytes[start + 3] == token[3] { return true }
        }
        return false
    }

    private static func firstNull(in value: Any, key: String) -> String? {
        switch value {
        case is NSNull: return key
        case let dictionary as [String: Any]:
            for (name, child) in dictionary.sorted(by: { $0.key < $1.key }) {
                if let found = firstNull(in: child, key: name) { return found }
            }
            return nil
        case let array as [Any]:
            for child in array { if let found = firstNull(in: child, key: "") { return found } }
            return nil
        default: return nil
        }
    }
}
