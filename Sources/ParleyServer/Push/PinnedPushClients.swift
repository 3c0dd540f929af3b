internal import AsyncHTTPClient
import Foundation
import Synchronization

/// HTTP clients for Web Push endpoints written as names, each connecting to an address
/// ``PushHostCheck`` checked (AsyncHTTPClient's `dnsOverride`, the name still the one TLS verifies
/// and the request carries), so the HTTP client never looks the name up again: a second answer
/// leading inside (DNS rebinding) is never used.
///
/// Rules:
/// 1. One client per host name, pinned to one checked address, kept while a check's addresses
///    still hold it (its connections are reused across pushes); otherwise a new client is pinned
///    to the first checked address.
/// 2. At most ``limit`` names: pinning one more replaces an old name's client. A replaced client
///    is shut down after ``grace`` (the pushes it carries end within the sender's timeout).
/// 3. Every client refuses redirects, as ``WebPushSender/makeClient()`` does.
/// 4. ``shutdown()`` shuts every client down, replaced ones included, and pins no more (nil).
final class PinnedPushClients: Sendable {
    static let limit = 64
    private struct State {
        var pinned: [String: (address: String, client: HTTPClient)] = [:]
        var replaced: [ObjectIdentifier: HTTPClient] = [:]
        var closed = false
    }
    private let grace: Duration
    private let state = Mutex(State())

    init(grace: Duration) { self.grace = grace }

    /// The client for `host`, pinned to one of `checked` (rule 1); nil without checked addresses
    /// or after ``shutdown()``.
    func client(for host: String, checked: [[UInt8]]) -> HTTPClient? {
        let addresses = checked.map(Self.text)
        guard let first = addresses.first else { return nil }
        let answer = state.withLock { state -> (client: HTTPClient, replaced: [HTTPClient])? in
            guard !state.closed else { return nil }
            if let kept = state.pinned[host], addresses.contains(kept.address) { return (kept.client, []) }
            var replaced = state.pinned.removeValue(forKey: host).map { [$0.client] } ?? []
            if state.pinned.count >= Self.limit, let old = state.pinned.keys.first {
                replaced += state.pinned.removeValue(forKey: old).map { [$0.client] } ?? []
            }
            for old in replaced { state.replaced[ObjectIdentifier(old)] = old }
            let client = WebPushSender.makeClient(dnsOverride: [host: first])
            state.pinned[host] = (first, client)
            return (client, replaced)
        }
        guard let answer else { return nil }
        for old in answer.replaced { retire(old) }
        return answer.client
    }

    /// Rule 2: shut down once the pushes it carries are over.
    private func retire(_ client: HTTPClient) {
        Task { [grace] in
            try? await Task.sleep(for: grace)
            guard let retiring = self.state.withLock({ $0.replaced.removeValue(forKey: ObjectIdentifier(client)) }) else { return }
            try? await retiring.shutdown()
        }
    }

    /// Rule 4.
    func shutdown() async {
        let all = state.withLock { state in
            state.closed = true
            defer { (state.pinned, state.replaced) = ([:], [:]) }
            return state.pinned.values.map(\.client) + state.replaced.values
        }
        for client in all { try? await client.shutdown() }
    }

    /// How many names have a client (tests).
    var count: Int { state.withLock { $0.pinned.count } }

    /// An address as AsyncHTTPClient takes it: dotted IPv4, or IPv6 as eight hexadecimal groups.
    static func text(_ address: [UInt8]) -> String {
        if address.count == 4 { return address.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: address.count, by: 2).map { String(UInt16(address[$0]) << 8 | UInt16(address[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }
}
