import Foundation
import ParleyCore
import Synchronization

/// One user of the crash check: a client that behaves as the guarantees expect a client to, and
/// records everything it sees so the check can judge the server. It writes to a partner (a direct
/// conversation) or to a group of three.
///
/// As a client it: writes each message once into its outbox with a new clientId; sends it when
/// connected; after every reconnect resends every unacknowledged message, in order, with the same
/// clientId; resumes its stream from the last position it processed.
/// With `oneInFlight` it sends as the SDK's outbox does: one message at a time, the next once the
/// previous is acknowledged, and a refusal for a passing reason (the database restarting) sends the
/// same message again. That keeps a sender's order through refusals, which a pipelining client
/// cannot: the cluster check, where refusals are expected, uses it.
/// As a witness it records: each `sent` answer, each stream event's position (which must be the
/// previous one + 1 for a pair's client and above it for a group member's, unless the server said
/// `resync`), and each message event (which must be new).
final class CrashCheckClient: Sendable {
    struct Written: Sendable {
        var clientId: ClientMessageID
        var text: String
    }

    private struct State {
        var position: Int64 = 0
        var resyncs = 0
        var violations: [String] = []
        var seen: [String: Message] = [:]
        var outbox: [Written] = []
        var acked: [ClientMessageID: Message] = [:]
        var socket: BenchSocket?
        var connections = 0
        /// With `oneInFlight`: the message sent and not yet answered.
        var inFlight: ClientMessageID?
        /// Message actions, in the order written; sent one at a time, in that order.
        var actions: [WrittenAction] = []
        var actedIds: Set<ClientMessageID> = []
        var actionInFlight: ClientMessageID?
        var editCount = 0
        var receipts = ReceiptWitness()
    }

    /// Where a client writes: to its partner (a direct conversation), or to a group it is in.
    enum Destination: Sendable, Equatable {
        case partner(UserID)
        case group(ConversationID)
    }

    let session: BenchAPI.Session
    let destination: Destination
    let oneInFlight: Bool
    private let state = Mutex(State())

    init(session: BenchAPI.Session, destination: Destination, oneInFlight: Bool = false) {
        self.session = session
        self.destination = destination
        self.oneInFlight = oneInFlight
    }

    /// The conversation the client writes to and watches.
    var conversation: ConversationID {
        switch destination {
        case .partner(let partner): .direct(session.user.id, partner)
        case .group(let id): id
        }
    }

    /// The partner of a direct conversation (nil in a group).
    var partner: UserID? { if case .partner(let partner) = destination { partner } else { nil } }

    // MARK: Client

    /// Writes a new message: into the outbox, and onto the socket if there is one. Queuing onto the
    /// socket happens under the same lock as the resend after a reconnect, so the server receives
    /// a client's messages in the order they were written.
    func write(_ text: String) {
        let entry = Written(clientId: .random(), text: text)
        state.withLock { state in
            state.outbox.append(entry)
            if oneInFlight { sendNext(&state) } else { state.socket?.send(frame(entry)) }
        }
    }

    /// With `oneInFlight`: sends the oldest unacknowledged message unless one is in flight.
    private func sendNext(_ state: inout State) {
        guard state.inFlight == nil, let socket = state.socket,
            let next = state.outbox.first(where: { state.acked[$0.clientId] == nil })
        else { return }
        state.inFlight = next.clientId
        socket.send(frame(next))
    }

    /// Writes an action on one of the client's acknowledged messages not deleted yet (a random
    /// one), if there is one: a reaction, an edit or a delete for everyone, as `kind` says.
    func act(_ kind: MessageActionKind) {
        state.withLock { state in
            let deleted = Set(state.actions.filter { $0.kind == .delete }.map(\.seq))
            guard let target = state.acked.values.filter({ !deleted.contains($0.seq) }).randomElement() else { return }
            var action = WrittenAction(clientId: .random(), conversation: target.conversationId, seq: target.seq, kind: kind)
            switch kind {
            case .react: action.emoji = ["👍", "❤️", "😂", "🎉", nil].randomElement() ?? nil
            case .edit:
                state.editCount += 1
                action.text = "\(target.text)e\(state.editCount)."
            case .delete, .hide: break
            }
            state.actions.append(action)
            sendNextAction(&state)
        }
    }

    /// Sends the oldest unanswered action unless one is in flight: actions apply in the order written.
    private func sendNextAction(_ state: inout State) {
        guard state.actionInFlight == nil, let socket = state.socket,
            let next = state.actions.first(where: { !state.actedIds.contains($0.clientId) })
        else { return }
        state.actionInFlight = next.clientId
        socket.send(next.frame)
    }

    /// Keeps a connection open (reconnecting whenever the server goes away) until `stop` says so.
    /// `url` is asked before each connection (a cluster check spreads them over its nodes).
    func maintainConnection(url: @escaping @Sendable () -> String, stop: @escaping @Sendable () -> Bool) async {
        while !stop() {
            let after = state.withLock { $0.position }
            if let socket = try? await BenchSocket.connect(url: url(), token: session.token, after: after, onText: { [self] in receive($0) }) {
                state.withLock { state in
                    state.socket = socket
                    state.connections += 1
                    state.inFlight = nil
                    state.actionInFlight = nil
                    if oneInFlight {
                        sendNext(&state)
                    } else {
                        for entry in state.outbox where state.acked[entry.clientId] == nil { socket.send(frame(entry)) }
                    }
                    sendNextAction(&state)
                }
                await socket.closed()
                state.withLock { state in
                    state.socket = nil
                    state.inFlight = nil
                    state.actionInFlight = nil
                    state.receipts.disconnected()
                }
            }
            try? await Task.sleep(for: .milliseconds(Int.random(in: 20...120)))
        }
        state.withLock { $0.socket }?.close()
    }

    /// Closes the current connection (used once ``maintainConnection(url:stop:)`` is told to stop).
    func stopNow() { state.withLock { $0.socket }?.close() }

    private func frame(_ entry: Written) -> ClientFrame {
        switch destination {
        case .partner(let partner): .send(SendRequest(clientId: entry.clientId, recipientId: partner, text: entry.text))
        case .group(let id): .send(SendRequest(clientId: entry.clientId, conversationId: id, text: entry.text))
        }
    }

    // MARK: Witness

    func receive(_ text: String) {
        guard let frame = try? JSONDecoder().decode(ServerFrame.self, from: Data(text.utf8)) else {
            state.withLock { $0.violations.append("undecodable frame: \(text.prefix(80))") }
            return
        }
        state.withLock { state in
            // An ack with a position stands in for the sender's own event at that position.
            let streamed: (position: Int64, message: Message?)? =
                switch frame {
                case .event(let event): if case .message(let message) = event.payload { (event.position, message) } else { (event.position, nil) }
                case .sent(_, let message, _, let position?): (position, message)
                default: nil
                }
            // A change to a message delivered before: the receiver's copy becomes the message as it is now.
            if case .event(let event) = frame, case .messageUpdated(let message) = event.payload {
                state.seen["\(message.conversationId)#\(message.seq)"] = message
            }
            if case .event(let event) = frame { state.receipts.observe(event.payload, me: session.user.id, in: conversation) }
            if let streamed {
                // A group message takes one position for all its members, skipping over positions of
                // others' streams (SQLite), so a group member's stream only ascends; a pair's is gapless.
                let inOrder = if case .group = destination { streamed.position > state.position } else { streamed.position == state.position + 1 }
                if !inOrder {
                    state.violations.append("stream position \(streamed.position) after \(state.position)")
                }
                state.position = max(state.position, streamed.position)
                if let message = streamed.message {
                    let key = "\(message.conversationId)#\(message.seq)"
                    if state.seen[key] != nil { state.violations.append("message \(key) delivered twice") }
                    state.seen[key] = message
                    // Read as a person reads: now and then, up to the newest message seen.
                    if message.conversationId == conversation, let receipt = state.receipts.saw(message.seq, in: conversation, canSend: state.socket != nil) {
                        state.socket?.send(receipt)
                    }
                }
            }
            switch frame {
            case .ack(let ref):
                _ = state.receipts.answered(ref, applied: true)
            case .error(let ref, nil, let code, _) where Self.passingRefusals.contains(code) && state.receipts.answered(ref, applied: false):
                break  // a receipt refused for a passing reason: the next one goes out after the next messages
            case .resync(let position):
                state.resyncs += 1
                state.position = position
            case .sent(_, let message, _, _):
                if let earlier = state.acked[message.clientId], earlier != message {
                    state.violations.append("clientId \(message.clientId) acknowledged as two different messages")
                }
                state.acked[message.clientId] = message
                if oneInFlight, state.inFlight == message.clientId {
                    state.inFlight = nil
                    sendNext(&state)
                }
            case .acted(let ref, _, _):
                guard let ref, let clientId = ClientMessageID(validating: ref), state.actions.contains(where: { $0.clientId == clientId }) else { break }
                state.actedIds.insert(clientId)
                if state.actionInFlight == clientId {
                    state.actionInFlight = nil
                    sendNextAction(&state)
                }
            case .error(_, let clientId?, let code, _) where Self.passingRefusals.contains(code) && state.actionInFlight == clientId:
                Task { [self] in
                    try? await Task.sleep(for: .milliseconds(100))
                    self.state.withLock { state in
                        guard state.actionInFlight == clientId else { return }
                        state.actionInFlight = nil
                        sendNextAction(&state)
                    }
                }
            case .error(_, let clientId, let code, _) where Self.passingRefusals.contains(code):
                // Sent again, in order: at once by the pipelining client's next reconnect, or here.
                if oneInFlight, let clientId, state.inFlight == clientId {
                    Task { [self] in
                        try? await Task.sleep(for: .milliseconds(100))
                        self.state.withLock { state in
                            guard state.inFlight == clientId else { return }
                            state.inFlight = nil
                            sendNext(&state)
                        }
                    }
                }
            case .error(_, _, let code, let message):
                state.violations.append("refused: \(code.rawValue) \(message)")
            default:
                break
            }
        }
    }

    /// Refusals a correct server may answer while it or its database restarts.
    static let passingRefusals: Set<ErrorCode> = [.rateLimited, .storageUnavailable, .unavailable]

    // MARK: Results

    var allAcked: Bool {
        state.withLock { state in
            state.outbox.allSatisfy { state.acked[$0.clientId] != nil } && state.actions.allSatisfy { state.actedIds.contains($0.clientId) }
        }
    }
    /// The actions written, in order.
    var actions: [WrittenAction] { state.withLock { $0.actions } }
    var outbox: [Written] { state.withLock { $0.outbox } }
    var acked: [ClientMessageID: Message] { state.withLock { $0.acked } }
    /// How many messages were written, and how many acknowledged (without copying them).
    var writtenCount: Int { state.withLock { $0.outbox.count } }
    var ackedCount: Int { state.withLock { $0.acked.count } }
    var actedCount: Int { state.withLock { $0.actedIds.count } }
    var seen: [String: Message] { state.withLock { $0.seen } }
    /// Messages people wrote that the client saw (membership entries left out).
    var seenWritten: Int { state.withLock { $0.seen.values.count { $0.entry == nil } } }
    var violations: [String] { state.withLock { $0.violations + $0.receipts.violations } }
    /// The highest read cursor the server acknowledged, and how many receipts it acknowledged.
    var acknowledgedRead: (seq: Int64, count: Int) { state.withLock { ($0.receipts.acknowledgedRead, $0.receipts.acknowledged) } }
    var resyncs: Int { state.withLock { $0.resyncs } }
    var connections: Int { state.withLock { $0.connections } }
}
