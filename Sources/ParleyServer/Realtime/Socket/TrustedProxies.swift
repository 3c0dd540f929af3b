import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 network, written `address/prefix` (a bare address is a single host).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The address bytes (4 or 16), already masked to the prefix.
    let bytes: [UInt8]
    let prefixLength: Int

    /// Parses `10.0.0.0/8`, `127.0.0.1`, `::1/128`, `fd00::/8`; `nil` for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPNetwork.addressBytes(String(parts[0])) else { return nil }
        let bits = address.count * 8
        var prefix = bits
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...bits).contains(parsed) else { return nil }
            prefix = parsed
        }
        self.prefixLength = prefix
        self.bytes = IPNetwork.masked(address, prefix: prefix)
    }

    public var description: String {
        let address = (try? SocketAddress(packedIPAddress: ByteBuffer(bytes: bytes), port: 0))?.ipAddress ?? "?"
        return "\(address)/\(prefixLength)"
    }

    /// Whether `address` (textual IPv4 or IPv6) lies in this network. An IPv4-mapped IPv6 address
    /// (`::ffff:10.0.0.1`) counts as its IPv4 address.
    func contains(_ address: [UInt8]) -> Bool {
        let address = IPNetwork.unmapped(address)
        guard address.count == bytes.count else { return false }
        return IPNetwork.masked(address, prefix: prefixLength) == bytes
    }

    /// The packed bytes of a textual IP address (no port, no brackets), or `nil`.
    static func addressBytes(_ text: String) -> [UInt8]? {
        // inet_pton straight into bytes: reading `sockaddr_in` members would tie this file to
        // whichever C module a clean build makes their owner (Glibc or NIO's CNIOLinux).
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 != 0 }) else { return nil }
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, text, &v4) == 1 { return v4 }
        var v6 = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, text, &v6) == 1 { return unmapped(v6) }
        return nil
    }

    private static func unmapped(_ bytes: [UInt8]) -> [UInt8] {
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return Array(bytes[12..<16])
        }
        return bytes
    }

    private static func masked(_ bytes: [UInt8], prefix: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bitsHere = max(0, min(8, prefix - index * 8))
            return bitsHere == 8 ? byte : byte & UInt8(truncatingIfNeeded: 0xFF << (8 - bitsHere))
        }
    }
}

/// Which peers are reverse proxies whose `X-Forwarded-For` / `Forwarded` headers are believed.
///
/// Rules: a request straight from an untrusted peer is that peer, whatever its headers say (anyone
/// can write `X-Forwarded-For`). From a trusted proxy, the client is the right-most address in the
/// forwarding chain that is not itself a trusted proxy; each proxy appends the address it saw, so
/// addresses left of that one were written by the client and are ignored. A chain that does not
/// parse leaves the proxy's own address.
public struct TrustedProxies: Sendable {
    public var networks: [IPNetwork]

    public init(_ networks: [IPNetwork] = []) {
        self.networks = networks
    }

    func isTrusted(_ address: String?) -> Bool {
        guard !networks.isEmpty, let address, let bytes = IPNetwork.addressBytes(address) else { return false }
        return networks.contains { $0.contains(bytes) }
    }

    /// The client's address for a request that reached us from `peer` with these headers.
    func clientAddress(peer: String?, forwardedFor: [String], forwarded: [String]) -> String? {
        guard isTrusted(peer) else { return peer }
        let chain = forwardedFor.isEmpty ? Self.forwardedChain(forwarded) : Self.forwardedForChain(forwardedFor)
        guard let chain, !chain.isEmpty else { return peer }
        for hop in chain.reversed() {
            guard IPNetwork.addressBytes(hop) != nil else { return peer }
            if !isTrusted(hop) { return hop }
        }
        return chain.first
    }

    /// `X-Forwarded-For: client, proxy1, proxy2` (several header lines join into one list).
    static func forwardedForChain(_ values: [String]) -> [String]? {
        values.flatMap { $0.split(separator: ",") }.map { stripPort(String($0).trimmingSpaces) }
    }

    /// RFC 7239 `Forwarded: for=192.0.2.1;proto=https, for="[2001:db8::1]:443"`.
    static func forwardedChain(_ values: [String]) -> [String]? {
        var chain: [String] = []
        for element in values.flatMap({ $0.split(separator: ",") }) {
            let pairs = element.split(separator: ";").map { $0.trimmingSpaces }
            guard let pair = pairs.first(where: { $0.lowercased().hasPrefix("for=") }) else { return nil }
            var value = String(pair.dropFirst(4))
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            chain.append(stripPort(value))
        }
        return chain
    }

    /// `[::1]:443` → `::1`; `1.2.3.4:80` → `1.2.3.4`; a bare IPv6 address is left alone.
    private static func stripPort(_ value: String) -> String {
        if value.hasPrefix("["), let close = value.firstIndex(of: "]") {
            return String(value[value.index(after: value.startIndex)..<close])
        }
        if value.filter({ $0 == ":" }).count == 1, let colon = value.firstIndex(of: ":") {
            return String(value[..<colon])
        }
        return value
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
