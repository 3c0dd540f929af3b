import Foundation

/// A field of a request is present with a value of its type, or left out: an explicit `null` for a
/// declared field is refused. openapi.yaml marks no request field `nullable`, and a decoder that
/// read `null` as "absent" would let a request mean something the API does not say. Undeclared
/// fields are ignored whatever they hold, as every unknown field is (docs/protocol.md).
public enum ExplicitNull {
    /// The first of `declared` that the JSON object in `bytes` sets to `null`, or `nil` (also when
    /// the bytes are not a JSON object). Parses only when the bytes contain `null` at all, so
    /// ordinary input costs one scan.
    /// `nested` names the declared fields of the objects a field holds (an object, or an array of
    /// them: a send's `attachments`); such a null is named by its path (`attachments[0].width`).
    public static func field(in bytes: [UInt8], declared: Set<String>, nested: [String: Set<String>] = [:]) -> String? {
        guard containsNullToken(bytes),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as? [String: Any]
        else { return nil }
        if let field = declared.sorted().first(where: { object[$0] is NSNull }) { return field }
        for (key, fields) in nested.sorted(by: { $0.key < $1.key }) {
            if let inner = object[key] as? [String: Any], let field = fields.sorted().first(where: { inner[$0] is NSNull }) {
                return "\(key).\(field)"
            }
            for (index, element) in ((object[key] as? [Any]) ?? []).enumerated() {
                guard let inner = element as? [String: Any], let field = fields.sorted().first(where: { inner[$0] is NSNull }) else { continue }
                return "\(key)[\(index)].\(field)"
            }
        }
        return nil
    }

    /// The error message for a declared field sent as `null`.
    public static func message(field: String) -> String {
        "'\(field)' is null: leave a field out instead of sending null."
    }

    private static func containsNullToken(_ bytes: [UInt8]) -> Bool {
        let token: [UInt8] = Array("null".utf8)
        guard bytes.count >= token.count else { return false }
        for start in 0...(bytes.count - token.count) where bytes[start] == token[0] {
            if bytes[start + 1] == token[1], bytes[start + 2] == token[2], bytes[start + 3] == token[3] { return true }
        }
        return false
    }
}

/// A request body whose fields are known by name, so an explicit `null` for one is refused
/// (``ExplicitNull``). Every request body of the REST API and the WebSocket's frames declare theirs.
public protocol DeclaredFields {
    static var declaredFields: Set<String> { get }
    /// The declared fields of the objects inside a field (``ExplicitNull/field(in:declared:nested:)``).
    static var nestedDeclaredFields: [String: Set<String>] { get }
}

extension DeclaredFields {
    /// None by default: the body's fields hold no objects of their own.
    public static var nestedDeclaredFields: [String: Set<String>] { [:] }
}

/// What an attachment of a send declares.
private let attachmentFields: Set<String> = ["uploadId", "thumbnail", "placeholder", "width", "height", "durationMs"]

extension API.RegisterRequest: DeclaredFields { public static let declaredFields: Set<String> = ["username", "displayName", "password"] }
extension API.LoginRequest: DeclaredFields { public static let declaredFields: Set<String> = ["username", "password"] }
extension API.ChangePasswordRequest: DeclaredFields { public static let declaredFields: Set<String> = ["currentPassword", "newPassword"] }
extension API.CreateConversationRequest: DeclaredFields { public static let declaredFields: Set<String> = ["userId"] }
extension API.ReceiptRequest: DeclaredFields { public static let declaredFields: Set<String> = ["deliveredSeq", "readSeq"] }
extension SendRequest: DeclaredFields {
    public static let declaredFields: Set<String> = ["ref", "clientId", "conversationId", "recipientId", "text", "replyToSeq", "attachments"]
    public static var nestedDeclaredFields: [String: Set<String>] { ["attachments": attachmentFields] }
}
extension API.FileLinksRequest: DeclaredFields { public static let declaredFields: Set<String> = ["ids"] }
extension API.ProfileRequest: DeclaredFields { public static let declaredFields: Set<String> = ["displayName"] }
extension API.PhotoRequest: DeclaredFields { public static let declaredFields: Set<String> = ["uploadId"] }
extension API.WebPushSubscriptionBody: DeclaredFields {
    public static let declaredFields: Set<String> = ["endpoint", "keys"]
    public static var nestedDeclaredFields: [String: Set<String>] { ["keys": ["p256dh", "auth"]] }
}
extension API.WebPushUnsubscribeBody: DeclaredFields { public static let declaredFields: Set<String> = ["endpoint"] }
extension API.APNsTokenBody: DeclaredFields { public static let declaredFields: Set<String> = ["environment"] }
extension NotificationPreviewChange: DeclaredFields { public static let declaredFields: Set<String> = ["preview"] }
extension ConversationNotificationChange: DeclaredFields { public static let declaredFields: Set<String> = ["level", "mute"] }
extension ClientFrame: DeclaredFields {
    public static let declaredFields: Set<String> = Set(CodingKeys.allCases.map(\.stringValue))
    public static var nestedDeclaredFields: [String: Set<String>] { ["attachments": attachmentFields] }
}
