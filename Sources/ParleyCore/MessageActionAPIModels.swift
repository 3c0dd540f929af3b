extension API {
    /// `POST /v1/conversations/{id}/messages/{seq}/actions`: react, edit, delete or hide a message.
    public struct MessageActionBody: Codable, Sendable {
        /// The action's idempotency key.
        public var clientId: ClientMessageID
        /// What to do.
        public var kind: MessageActionKind
        /// For `react`: the emoji, or absent to clear my reaction.
        public var emoji: String?
        /// For `edit`: the new text.
        public var text: String?
        /// Creates the request body.
        public init(clientId: ClientMessageID, kind: MessageActionKind, emoji: String? = nil, text: String? = nil) {
            self.clientId = clientId
            self.kind = kind
            self.emoji = emoji
            self.text = text
        }
    }

    /// The answer to a message action: the message as it is now (200), `duplicate` for a retry.
    public struct MessageActionResponse: Codable, Sendable {
        /// The message after the action, as the actor sees it.
        public var message: Message
        /// True when this client id was used before: nothing new was applied.
        public var duplicate: Bool
        /// Creates the response body.
        public init(message: Message, duplicate: Bool) {
            self.message = message
            self.duplicate = duplicate
        }
    }

    /// `GET /v1/conversations/{id}/messages/{seq}/versions`: the earlier texts of an edited message.
    public struct MessageVersionsResponse: Codable, Sendable {
        /// Earlier texts, oldest first (empty when it was never edited or was deleted).
        public var versions: [MessageVersion]
        /// Creates the response body.
        public init(versions: [MessageVersion]) { self.versions = versions }
    }
}

extension API.MessageActionBody: DeclaredFields {
    public static let declaredFields: Set<String> = ["clientId", "kind", "emoji", "text"]
}
