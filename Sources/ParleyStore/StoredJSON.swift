import Foundation
import ParleyCore

/// The JSON columns of messages (`entry`, `mentions`), written and read the same way by every backend.
public enum StoredJSON {
    /// A membership entry as stored.
    public static func text(_ entry: GroupEntry) -> String {
        String(decoding: (try? WireFormat.encoder().encode(entry)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// Mentioned user ids as stored (nil for none).
    public static func text(_ mentions: [UserID]?) -> String? {
        guard let mentions, !mentions.isEmpty else { return nil }
        return String(decoding: (try? WireFormat.encoder().encode(mentions)) ?? Data("[]".utf8), as: UTF8.self)
    }

    /// A user id list as stored, "[]" for none (the invitees of a create or add, which are always stored).
    public static func ids(_ users: [UserID]) -> String {
        String(decoding: (try? WireFormat.encoder().encode(users)) ?? Data("[]".utf8), as: UTF8.self)
    }

    /// A message's attachments as stored (nil for none).
    public static func text(_ attachments: [Attachment]) -> String? {
        guard !attachments.isEmpty else { return nil }
        return String(decoding: (try? WireFormat.encoder().encode(attachments)) ?? Data("[]".utf8), as: UTF8.self)
    }

    public static func attachments(_ text: String?) -> [Attachment]? {
        guard let text else { return nil }
        return try? JSONDecoder().decode([Attachment].self, from: Data(text.utf8))
    }

    public static func entry(_ text: String?) -> GroupEntry? {
        guard let text else { return nil }
        return try? JSONDecoder().decode(GroupEntry.self, from: Data(text.utf8))
    }

    /// A stored user id list: a message's mentions, or whom a create or add invited.
    public static func userIDs(_ text: String?) -> [UserID]? {
        guard let text else { return nil }
        return try? JSONDecoder().decode([UserID].self, from: Data(text.utf8))
    }
}
