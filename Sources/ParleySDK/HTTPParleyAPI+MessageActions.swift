import Foundation
import ParleyCore

/// The message action routes (docs/protocol.md "Message actions").
extension HTTPParleyAPI {
    /// Reacts to, edits, deletes for everyone or hides (deletes for me) a message.
    public func act(on seq: Int64, in id: ConversationID, _ body: API.MessageActionBody, token: String) async throws -> API.MessageActionResponse {
        try await call(.POST, "/v1/conversations/\(id)/messages/\(seq)/actions", token: token, body: body)
    }

    /// The earlier texts of an edited message, oldest first (empty when never edited, or deleted).
    public func versions(of seq: Int64, in id: ConversationID, token: String) async throws -> [MessageVersion] {
        let answer: API.MessageVersionsResponse = try await call(.GET, "/v1/conversations/\(id)/messages/\(seq)/versions", token: token)
        return answer.versions
    }
}
