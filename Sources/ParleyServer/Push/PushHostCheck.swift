import Foundation
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Whether a Web Push endpoint's host name leads outside the server's own networks, looked up
/// before each push: ``WebPushEndpoint`` refuses inside addresses written as numbers when a
/// subscription is registered, but a name (a public one pointing at `127.0.0.1`, a dotted name in
/// `/etc/hosts`, an internal DNS name) would otherwise lead the server's POST inside.
///
/// Rules:
/// 1. A host written as an IP address is not looked up (``WebPushEndpoint`` checked it).
/// 2. A name is allowed only if every address it resolves to is outside the ranges
///    ``WebPushEndpoint`` refuses (loopback allowed only with `allowLoopback`, tests and local
///    development): `inside` otherwise, and the push's subscription is removed, as no browser's
///    push service is inside.
/// 3. A failed lookup is `unresolved`: the push is tried again later, as after a connection
///    failure.
/// 4. An answer is kept ``answerLifetime`` (a failure 5 s), at most 4,096 names (all forgotten when
///    full), so a push costs no lookup while its service's connection is reused anyway.
/// 5. The addresses an `outside` answer found are kept with it (``checkedAddresses(of:)``): the
///    request is sent to one of them (``PinnedPushClients``), never to where a second lookup
///    would lead, so a name whose answer changes after the check (DNS rebinding) cannot take it inside.
final class PushHostCheck: Sendable {
    enum Verdict: Sendable, Equatable { case outside, inside, unresolved }

    typealias Resolve = @Sendable (String) async throws -> [[UInt8]]

    static let answerLifetime = Duration.seconds(60)
    private let allowLoopback: Bool
    private let resolve: Resolve
    private let answers = Mutex<[String: (verdict: Verdict, addresses: [[UInt8]], until: ContinuousClock.Instant)]>([:])

    init(allowLoopback: Bool, resolve: @escaping Resolve = PushHostCheck.systemResolve) {
        self.allowLoopback = allowLoopback
        self.resolve = resolve
    }

    func verdict(for endpoint: URL) async -> Verdict {
        guard let host = endpoint.host?.lowercased(), !host.isEmpty else { return .inside }
        if Self.isAddress(host) { return .outside }  // rule 1
        let now = ContinuousClock.now
        if let kept = answers.withLock({ $0[host] }), kept.until > now { return kept.verdict }
        let verdict: Verdict
        var found: [[UInt8]] = []
        do {
            found = try await resolve(host)
            let inside = found.isEmpty || found.contains { WebPushEndpoint.isInside($0, allowLoopback: allowLoopback) }
            verdict = inside ? .inside : .outside
        } catch {
            verdict = .unresolved
        }
        let until = now.advanced(by: verdict == .unresolved ? .seconds(5) : Self.answerLifetime)
        answers.withLock { answers in
            if answers.count >= 4_096 { answers.removeAll() }
            answers[host] = (verdict, verdict == .outside ? found : [], until)
        }
        return verdict
    }

    /// The addresses the last `outside` answer for `endpoint`'s host name found, every one of them
    /// outside (rule 5); empty for a host written as an address, or without such an answer.
    func checkedAddresses(of endpoint: URL) -> [[UInt8]] {
        guard let host = endpoint.host?.lowercased() else { return [] }
        return answers.withLock { $0[host].map { $0.verdict == .outside ? $0.addresses : [] } ?? [] }
    }

    /// Whether a URL's host is an address written as numbers (IPv6 in brackets), not a name.
    static func isAddress(_ host: String) -> Bool {
        IPNetwork.addressBytes(host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host) != nil
    }

    struct LookupFailed: Error {}

    /// Every address `host` resolves to (the system's resolver, as the HTTP client's), on NIO's
    /// thread pool: `getaddrinfo` blocks.
    static func systemResolve(_ host: String) async throws -> [[UInt8]] {
        try await NIOThreadPool.singleton.runIfActive {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { throw LookupFailed() }
            defer { freeaddrinfo(first) }
            var addresses: [[UInt8]] = []
            var next: UnsafeMutablePointer<addrinfo>? = first
            while let entry = next {
                // As text, then bytes: no reading of `sockaddr_in` members (see IPNetwork.addressBytes).
                var text = [UInt8](repeating: 0, count: Int(NI_MAXHOST))
                let named = text.withUnsafeMutableBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) {
                        getnameinfo(entry.pointee.ai_addr, entry.pointee.ai_addrlen, $0.baseAddress, socklen_t($0.count), nil, 0, NI_NUMERICHOST)
                    }
                }
                let numeric = String(decoding: text.prefix { $0 != 0 }, as: UTF8.self).split(separator: "%").first.map(String.init) ?? ""
                if named == 0, let bytes = IPNetwork.addressBytes(numeric) { addresses.append(bytes) }
                next = entry.pointee.ai_next
            }
            return addresses
        }
    }
}
