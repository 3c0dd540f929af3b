import ParleyCore

/// The checks of ``CrashCheck``, for one client against its conversation as the server stored it.
enum CrashCheckRules {
    /// `stored` is the whole conversation, membership entries included; `checkSeq` checks rule 3
    /// (once per conversation).
    static func check(client: CrashCheckClient, index: Int, stored: [Message], checkSeq: Bool) -> [String] {
        let who = "client \(index)"
        var problems = client.violations.map { "\(who): \($0)" }
        let me = client.session.user.id
        let mine = stored.filter { $0.senderId == me && $0.entry == nil }
        var storedByClientId: [ClientMessageID: [Message]] = [:]
        for message in mine { storedByClientId[message.clientId, default: []].append(message) }

        // Rule 1: acknowledged = stored, once, as acknowledged.
        for (clientId, acked) in client.acked {
            let copies = storedByClientId[clientId] ?? []
            if copies.count != 1 { problems.append("\(who): acknowledged \(clientId) stored \(copies.count) times") }
            // As acknowledged: the same message; its text and reactions are what actions made of them since (rule 7).
            if let copy = copies.first, copy.id != acked.id || copy.seq != acked.seq || copy.createdAt != acked.createdAt {
                problems.append("\(who): \(clientId) stored differently from its acknowledgement")
            }
        }
        // Rule 2: every clientId written is stored exactly once; nothing else is stored.
        let written = client.outbox
        for entry in written where storedByClientId[entry.clientId]?.count != 1 {
            problems.append("\(who): written \(entry.clientId) stored \(storedByClientId[entry.clientId]?.count ?? 0) times")
        }
        if mine.count != written.count { problems.append("\(who): wrote \(written.count), stored \(mine.count)") }
        // Rule 3: gapless seq (checked once per conversation).
        if checkSeq, stored.enumerated().contains(where: { offset, message in message.seq != Int64(offset + 1) }) {
            problems.append("\(who): seq not gapless")
        }
        // Rule 4: the sender's order.
        let seqs = written.compactMap { storedByClientId[$0.clientId]?.first?.seq }
        if seqs != seqs.sorted() { problems.append("\(who): messages stored out of the order written") }
        // Rule 5: the receiver saw every message once (duplicates are reported as they happen).
        let seen = client.seen
        let missing = stored.filter { seen["\($0.conversationId)#\($0.seq)"] == nil }
        if !missing.isEmpty, client.resyncs == 0 { problems.append("\(who): \(missing.count) stored messages never delivered") }
        for message in stored {
            if let delivered = seen["\(message.conversationId)#\(message.seq)"], delivered != message {
                problems.append("\(who): seq \(message.seq) delivered differently from how it is stored")
            }
        }
        return problems
    }
}
