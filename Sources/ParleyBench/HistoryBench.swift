import Foundation
import Histogram
import ParleyCore

/// History pages from a large conversation, and cold chat opens (connect, authenticate, latest 50).
public struct HistoryBench: Sendable {
    public struct Options: Codable, Sendable {
        public var messages = 100_000
        public var pages = 500
        public var coldOpens = 100
        public init() {}
    }

    public struct Report: Codable, Sendable {
        public var options: Options
        public var fillSeconds = 0.0
        public var page: Percentiles?
        public var coldOpen: Percentiles?
    }

    let target: BenchTarget
    var api: BenchAPI { target.api }
    var webSocketURL: String { target.webSocketURL }

    public init(_ target: BenchTarget) { self.target = target }

    public func run(_ options: Options, log: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        var report = Report(options: options)
        let prefix = "h" + String(UInt32.random(in: 0...UInt32.max), radix: 36) + "_"
        let users = try await api.registerMany(prefix: prefix, count: 2)
        let (alice, bob) = (users[0], users[1])
        let conversation = try await api.startConversation(alice, with: bob.user.id).id

        log("filling the conversation with \(options.messages) messages")
        let fillStart = ContinuousClock.now
        _ = try await Filler(api: api, webSocketURL: webSocketURL).fill(alice, conversation, count: options.messages)
        report.fillSeconds = (ContinuousClock.now - fillStart).seconds

        log("fetching \(options.pages) pages of 50")
        var pages = Histogram<UInt64>.microseconds()
        for _ in 0..<options.pages {
            let before = Int64.random(in: 51...Int64(options.messages + 1))
            let start = BenchClock.nowMicros()
            let page = try await api.history(bob, conversation, before: before)
            pages.record(clamping: BenchClock.nowMicros() - start)
            guard page.messages.count == 50 else { throw BenchAPI.Failure(description: "short page before \(before)") }
        }
        report.page = Percentiles(pages)

        log("cold opens")
        var opens = Histogram<UInt64>.microseconds()
        for _ in 0..<options.coldOpens {
            let start = BenchClock.nowMicros()
            let socket = try await BenchSocket.connect(url: webSocketURL, token: bob.token) { _ in }
            _ = try await api.history(bob, conversation)
            opens.record(clamping: BenchClock.nowMicros() - start)
            socket.close()
            await socket.closed()
        }
        report.coldOpen = Percentiles(opens)
        return report
    }
}

/// Fills a conversation quickly over one WebSocket, keeping a window of sends in flight.
struct Filler {
    let api: BenchAPI
    let webSocketURL: String

    func fill(_ session: BenchAPI.Session, _ conversation: ConversationID, count: Int, window: Int = 128) async throws -> Int {
        let (answers, answered) = AsyncStream.makeStream(of: Void.self)
        let socket = try await BenchSocket.connect(url: webSocketURL, token: session.token) { text in
            if text.hasPrefix(#"{"duplicate":"#) || text.hasPrefix(#"{"clientId":"#) { answered.yield() }
        }
        var iterator = answers.makeAsyncIterator()
        var sent = 0, inFlight = 0
        while sent < count {
            while inFlight < window, sent < count {
                sent += 1
                inFlight += 1
                socket.send(.send(SendRequest(clientId: .random(), conversationId: conversation, text: "history \(sent)")))
            }
            guard await iterator.next() != nil else { break }
            inFlight -= 1
        }
        while inFlight > 0, await iterator.next() != nil { inFlight -= 1 }
        socket.close()
        await socket.closed()
        return sent
    }
}
