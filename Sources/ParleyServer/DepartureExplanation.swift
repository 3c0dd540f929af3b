import ParleyCore
import ParleyStore

extension ParleyStore {
    /// A group I left or was removed from answers as any chat that is not mine does (404
    /// `conversation_not_found`), but its message says why: I saw the entry that ended my
    /// membership, so the reason tells me nothing new. Any other error comes back as it was.
    func explainingDeparture(_ error: any Error, from conversation: ConversationID, for user: UserID) async -> any Error {
        guard (error as? StoreError) == .conversationNotFound, conversation.isGroup,
            (try? await self.conversation(conversation, as: user))?.leftSeq != nil
        else { return error }
        return ParleyError(StoreError.noLongerMember)
    }
}
