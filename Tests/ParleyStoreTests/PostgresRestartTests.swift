import Foundation
import Logging
import ParleyCore
import ParleyPostgres
import ParleyStore
import ParleyTestSupport
import Synchronization
import Testing

/// Guarantee 3 through a database restart. PostgreSQL is stopped the fast way (every session
/// terminated, open transactions rolled back: what an operator's restart or a failover does) and
/// started again, ten times, while sends are in flight. Senders act as the outbox does: a send
/// that fails is sent again with the same client id until it is answered. Then:
/// - every send that was answered is stored, at the seq it was answered with (acknowledged means
///   committed: an answer that came before its commit would be lost here, its seq reused);
/// - each conversation's seqs are 1…N with no gap, and no client id is stored twice;
/// - the store, with Parley's own pool settings, works again after every restart, and the process
///   is still alive (postgres-nio's pool trapped on a restart with a larger standing minimum).
@Suite struct PostgresRestartTests {
    @Test(.timeLimit(.minutes(10))) func noAcknowledgedSendIsLostAcrossRestarts() async throws {
        let server = try await offCooperativePool { try DedicatedPostgres() }
        defer { server.remove() }
        var logger = Logger(label: "restart-test")
        logger.logLevel = .critical  // each restart makes the pool warn
        let store = try await PostgresStore.connect(DatabaseURL(server.url), logger: logger)
        var users: [(UserID, UserID)] = []
        for n in 0..<6 { users.append((try await store.makeUser("sender\(n)").id, try await store.makeUser("recipient\(n)").id)) }
        let pairs = users
        let ledger = Ledger()
        let senders = Task {
            await withTaskGroup(of: Void.self) { group in
                for (sender, recipient) in pairs {
                    group.addTask {
                        for n in 0..<20_000 {
                            let clientId = ClientMessageID.random()
                            while true {
                                if ledger.stopping.load(ordering: .relaxed) { return }
                                do {
                                    let message = NewMessage(sender: sender, clientId: clientId, target: .user(recipient), text: "m\(n)")
                                    let outcome = try await store.send(message, now: .now())
                                    ledger.acknowledged.withLock { $0[clientId] = outcome.message.seq }
                                    break
                                } catch {
                                    try? await Task.sleep(for: .milliseconds(20))
                                }
                            }
                        }
                    }
                }
            }
        }
        func waitForProgress(_ count: Int) async throws {
            let start = ledger.acknowledged.withLock { $0.count }
            while ledger.acknowledged.withLock({ $0.count }) < start + count { try await Task.sleep(for: .milliseconds(5)) }
        }
        for _ in 1...10 {
            try await waitForProgress(100)
            try await offCooperativePool { try server.stop() }
            try await offCooperativePool { try server.start() }
        }
        try await waitForProgress(100)
        ledger.stopping.store(true, ordering: .relaxed)
        await senders.value

        let answered = ledger.acknowledged.withLock { $0 }
        var stored: [ClientMessageID: Int64] = [:]
        for (sender, recipient) in pairs {
            let conversation = ConversationID.direct(sender, recipient)
            var seqs: [Int64] = []
            var after: Int64 = 0
            while true {
                let page = try await store.messages(in: conversation, as: sender, query: HistoryQuery(limit: 500, after: after))
                for message in page.messages {
                    #expect(stored.updateValue(message.seq, forKey: message.clientId) == nil, "client id \(message.clientId) stored twice")
                    seqs.append(message.seq)
                }
                guard let last = page.messages.last, page.hasMore else { break }
                after = last.seq
            }
            #expect(seqs == (0..<seqs.count).map { Int64($0) + 1 }, "seqs of \(conversation) have a gap")
        }
        let lost = answered.filter { stored[$0.key] != $0.value }
        #expect(lost.isEmpty, "\(lost.count) of \(answered.count) acknowledged sends are missing or at another seq")
        #expect(answered.count >= 400)
        try await store.close()
    }

    /// What the senders share with the test: each answered send's seq, and the signal to stop.
    final class Ledger: Sendable {
        let acknowledged = Mutex<[ClientMessageID: Int64]>([:])
        let stopping = Atomic<Bool>(false)
    }
}
