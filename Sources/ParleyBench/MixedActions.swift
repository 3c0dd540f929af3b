import Foundation
import Histogram
import ParleyCore

/// One sender's message actions in the mixed workload of ``MessageBench``: of each 100 numbers,
/// 10 are reactions, 5 edits and 1 a delete for everyone, each on the sender's latest acknowledged
/// message that is not deleted (none before the first acknowledgement: then the number is a send).
struct MixedActions {
    /// The seqs of acknowledged sends, newest last.
    private var storedSeqs: [Int64] = []
    private(set) var sent = 0
    private(set) var acknowledgedCount = 0
    private(set) var latency = Histogram<UInt64>.microseconds()

    /// An action to send in place of message `number`, or nil to send a message.
    mutating func next(_ number: Int) -> WrittenAction? {
        let slot = number % 100
        guard slot < 16, let target = storedSeqs.last else { return nil }
        let kind: MessageActionKind = slot < 10 ? .react : slot < 15 ? .edit : .delete
        // A deleted message takes no more actions.
        if kind == .delete { storedSeqs.removeLast() }
        sent += 1
        // The ref carries the send time, so the answer is timed without any lookup.
        return WrittenAction(
            clientId: .random(), conversation: ConversationID(rawValue: ""), seq: target, kind: kind,
            emoji: kind == .react ? ["👍", "❤️", "😂"][number % 3] : nil, text: kind == .edit ? "edited \(number)" : nil)
    }

    mutating func stored(_ seq: Int64?) {
        if let seq { storedSeqs.append(seq) }
    }

    mutating func acknowledged(micros: UInt64) {
        acknowledgedCount += 1
        latency.record(clamping: micros)
    }

    /// Whether a frame is a `messageUpdated` event (not a delivery of a new message).
    static func isUpdate(_ frame: String) -> Bool { frame.utf8.count > 30 && frame.hasSuffix(#""type":"messageUpdated"}"#) }

    /// The send time carried by the ref of an `acted` answer, or nil if the frame is not one.
    static func actedSentAt(_ frame: String) -> UInt64? {
        guard frame.hasSuffix(#""type":"acted"}"#), let ref = frame.split(separator: #""ref":"a"#).last?.split(separator: "\"").first else {
            return nil
        }
        return UInt64(ref)
    }

    /// The `seq` of the message in a `sent` frame.
    static func seq(in frame: String) -> Int64? {
        guard let tail = frame.split(separator: #""seq":"#, maxSplits: 1).dropFirst().first else { return nil }
        return Int64(tail.prefix { $0.isNumber })
    }
}

extension MessageBench.Sender {
    /// The frame of a mixed-workload action in this sender's conversation.
    func frame(_ action: WrittenAction) -> String {
        var action = action
        action.conversation = conversation
        let request = MessageActionRequest(
            ref: "a\(BenchClock.nowMicros())", clientId: action.clientId, conversationId: conversation, seq: action.seq, kind: action.kind,
            emoji: action.emoji, text: action.text)
        return (try? String(decoding: WireFormat.encoder().encode(ClientFrame.action(request)), as: UTF8.self)) ?? "{}"
    }
}
