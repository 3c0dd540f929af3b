import ArgumentParser
import Foundation
import Histogram
import Logging
import ParleyBench
import ParleyCore
import ParleyPostgres
import ParleySQLite
import ParleyStore

extension Bench {
    /// `parley bench search`: fills a store with C conversations and N messages, then times searches
    /// of a user who is in M of them (docs/benchmarks.md "Search").
    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Times message search: a word, the start of one, a phrase and a CJK query, over N messages in C conversations, for a user in M of them.",
            discussion: "Talks to the store in-process (what the search route calls), so it measures the search, not HTTP.")
        @Option(help: "A new SQLite file, or postgres://… (an empty database).") var database: String
        @Option(help: "Messages in all.") var messages = 1_000_000
        @Option(help: "Conversations in all.") var conversations = 10_000
        @Option(help: "Conversations the searching user is in.") var memberOf = 200
        @Option(help: "Searches of each kind.") var queries = 200
        @Flag(help: "Search a database this bench filled before (PostgreSQL: after ANALYZE, which autovacuum does in time).")
        var queriesOnly = false

        func run() async throws {
            guard messages >= conversations, (1...100_000).contains(conversations), (1...conversations).contains(memberOf), (1...10_000).contains(queries)
            else {
                throw ValidationError("--conversations 1–100,000, --member-of 1–conversations, --messages at least --conversations, --queries 1–10,000.")
            }
            let store: any ParleyStore =
                DatabaseURL.isPostgres(database)
                ? try await PostgresStore.connect(DatabaseURL(database), poolSize: 8, logger: Logger(label: "bench"))
                : try SQLiteStore(path: database, durability: .normal)
            var data = SearchBenchData(seed: 35_38)
            var lines: [String] = []
            // Two words side by side in a stored message: a phrase that is there.
            var phrases: [String] = []
            let me: User
            if queriesOnly {
                guard let searcher = try await store.credentials(username: "searcher")?.user else { throw ValidationError("no data: fill it first") }
                me = searcher
            } else {
                me = try await store.createUser(NewUser(username: "searcher", displayName: "Searcher", passwordHash: "-"), now: .now())
                lines.append(try await fill(store, me, &data, &phrases))
            }
            for kind in ["word", "prefix-3", "prefix-4", "phrase", "cjk-2", "cjk-3"] {
                var latency = Histogram<UInt64>.microseconds()
                var found = 0
                for _ in 0..<queries {
                    let q: String =
                        switch kind {
                        case "word": data.word()
                        case "prefix-3": String(data.word().prefix(3))  // what one has typed of a word
                        case "prefix-4": String(data.word().prefix(4))
                        case "phrase": "\"\(phrases.isEmpty ? data.word() : phrases[data.below(phrases.count)])\""
                        case "cjk-2": ["東京", "会議", "京都", "写真", "近く"][data.below(5)]
                        default: ["会いましょう", "ありがとう", "カフェ", "送ります", "行きます"][data.below(5)]
                        }
                    let began = ContinuousClock.now
                    found += try await store.search(try SearchQuery.parse(q), as: me.id, limit: 21, offset: 0).count
                    latency.record(clamping: UInt64(Self.seconds(since: began) * 1_000_000))
                }
                let p95 = String(format: "%.2f ms", Double(latency.valueAtPercentile(95)) / 1000)
                lines.append("\(kind): p95 \(p95); \(Percentiles(latency).summary) (\(found / queries) results per search on average, 21 at most)")
            }
            try await store.close()
            ReportPrinter.print(lines, lines)
        }

        /// Makes the conversations and messages; returns the fill's line of the report.
        func fill(_ store: any ParleyStore, _ me: User, _ data: inout SearchBenchData, _ phrases: inout [String]) async throws -> String {
            var targets: [ConversationID] = []
            let start = ContinuousClock.now
            for index in 0..<conversations {
                let other = try await store.createUser(NewUser(username: "p\(index)", displayName: "P \(index)", passwordHash: "-"), now: .now())
                let first =
                    index < memberOf
                    ? me.id
                    : try await store.createUser(
                        NewUser(username: "q\(index)", displayName: "Q \(index)", passwordHash: "-"), now: .now()
                    ).id
                targets.append(try await store.createDirectConversation(between: first, and: other.id, now: .now()).conversation.id)
            }
            say("\(conversations) conversations in \(String(format: "%.0f", Self.seconds(since: start))) s; filling \(messages) messages")
            let fill = ContinuousClock.now
            var written = 0
            while written < messages {
                let batch = (0..<min(1_000, messages - written)).map { offset -> NewMessage in
                    let conversation = targets[(written + offset) % targets.count]
                    let sender = UserID(rawValue: String(conversation.rawValue.dropFirst(3).prefix(36)))
                    return NewMessage(sender: sender, clientId: .random(), target: .conversation(conversation), text: data.text())
                }
                // In 8 parts at once: PostgreSQL commits each send on its own, and the parts touch different conversations.
                let parts = stride(from: 0, to: batch.count, by: 125).map { Array(batch[$0..<min(batch.count, $0 + 125)]) }
                let results = await withTaskGroup(of: [Result<SendOutcome, any Error>].self) { group in
                    for part in parts { group.addTask { await store.send(part, now: .now()) } }
                    return await group.reduce(into: []) { $0 += $1 }
                }
                if let failure = results.first(where: { if case .failure = $0 { true } else { false } }) { throw ValidationError("fill failed: \(failure)") }
                for (offset, message) in batch.enumerated() where offset % 5_000 == 0 && !SearchText.hasCJK(message.text) {
                    phrases.append(message.text.split(separator: " ").prefix(2).joined(separator: " "))
                }
                written += batch.count
                if written % 100_000 == 0 { say("  \(written) (\(String(format: "%.0f", Double(written) / Self.seconds(since: fill)))/s)") }
            }
            let fillSeconds = Self.seconds(since: fill)
            return String(format: "filled %d messages in %.0f s (%.0f/s, the search index included)", messages, fillSeconds, Double(messages) / fillSeconds)
        }

        static func seconds(since start: ContinuousClock.Instant) -> Double { (ContinuousClock.now - start).seconds }
    }
}
