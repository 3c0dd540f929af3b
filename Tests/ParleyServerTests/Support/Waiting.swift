import ParleyCore

/// Waits on a socket's inbox for typical frames; each fails with what was received after a generous bound.
extension TestSocket {
    func message(seq: Int64) async throws -> Message {
        try await inbox.waitFor("message seq \(seq)") { frames in
            frames.lazy.compactMap { frame -> Message? in
                if case .event(let event) = frame, case .message(let message) = event.payload, message.seq == seq { message } else { nil }
            }.first
        }
    }

    func receipt(of user: UserID, where condition: @escaping @Sendable (ReceiptUpdate) -> Bool) async throws -> ReceiptUpdate {
        try await inbox.waitFor("receipt of \(user)") { frames in
            frames.lazy.compactMap { frame -> ReceiptUpdate? in
                if case .event(let event) = frame, case .receipt(let receipt) = event.payload, receipt.userId == user, condition(receipt) {
                    receipt
                } else {
                    nil
                }
            }.first
        }
    }

    /// The first `count` send acknowledgements, in arrival order.
    func sentAcks(count: Int) async throws -> [(message: Message, duplicate: Bool)] {
        try await inbox.waitFor("\(count) sent acks") { frames in
            let acks = frames.compactMap { frame -> (message: Message, duplicate: Bool)? in
                if case .sent(_, let message, let duplicate, _) = frame { (message, duplicate) } else { nil }
            }
            return acks.count >= count ? Array(acks.prefix(count)) : nil
        }
    }

    func synced() async throws -> Int64 {
        try await inbox.waitFor("synced") { frames in
            frames.lazy.compactMap { if case .synced(let position) = $0 { position } else { nil } }.first
        }
    }

    func firstError() async throws -> (code: ErrorCode, ref: String?, message: String) {
        try await inbox.waitFor("error frame") { frames in
            frames.lazy.compactMap { if case .error(let ref, _, let code, let message) = $0 { (code, ref, message) } else { nil } }.first
        }
    }

    func typing(_ user: UserID, isTyping: Bool) async throws {
        _ = try await inbox.waitFor("typing \(isTyping) from \(user)") { frames in
            frames.contains { if case .typing(_, let from, let value) = $0, from == user, value == isTyping { true } else { false } } ? true : nil
        }
    }

    func presence(_ user: UserID, online: Bool) async throws -> Timestamp? {
        try await inbox.waitFor("presence \(online) of \(user)") { frames in
            frames.lazy.compactMap { frame -> Timestamp?? in
                if case .presence(let who, let isOnline, let lastSeen) = frame, who == user, isOnline == online { .some(lastSeen) } else { nil }
            }.first
        }
    }
}
