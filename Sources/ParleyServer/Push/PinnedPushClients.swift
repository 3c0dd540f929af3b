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
/// 5. A request through a pinned client that fails (no connection, no answer in time) unpins it
///    (``failed(_:host:)``), and the next push pins another checked address while there is one:
///    one dead address of a service's several does not hold its pushes, as a client that looked
///    the name up itself would try the others.
final class PinnedPushClients: Sendable {
    static let limit = 64
    private struct State {
        var pinned: [String: (address: String, client: HTTPClient)] = [:]
        var replaced: [ObjectIdentifier: HTTPClient] = [:]
        /// The address each name's last failed request went to (rule 5).
        var failed: [String: String] = [:]
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
            let avoided = state.failed[host]
            if let kept = state.pinned[host], kept.address != avoided, addresses.contains(kept.address) { return (kept.client, []) }
            var replaced = state.pinned.removeValue(forKey: host).map { [$0.client] } ?? []
            if state.pinned.count >= Self.limit, let old = state.pinned.keys.first {
                replaced += state.pinned.removeValue(forKey: old).map { [$0.client] } ?? []
            }
            for old in replaced { state.replaced[ObjectIdentifier(old)] = old }
            let address = addresses.first { $0 != avoided } ?? first
            let client = WebPushSender.makeClient(dnsOverride: [host: address])
            state.pinned[host] = (address, client)
            return (client, replaced)
        }
        guard let answer else { return nil }
        for old in answer.replaced { retire(old) }
        return answer.client
    }

    /// Rule 5: `client`, pinned for `host`, failed a request.
    func failed(_ client: HTTPClient, host: String) {
        let unpinned = state.withLock { state -> HTTPClient? in
            guard let pin = state.pinned[host], pin.client === client else { return nil }
            if state.failed.count >= 4 * Self.limit { state.failed.removeAll() }
            state.failed[host] = pin.address
            state.pinned.removeValue(forKey: host)
            state.replaced[ObjectIdentifier(client)] = client
            return client
        }
        if let unpinned { retire(unpinned) }
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
