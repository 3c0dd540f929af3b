import Foundation
import ParleyCore

/// Which push-service endpoints a client may register: the server will POST to them, so an endpoint
/// is a request the server makes on a user's behalf and must not reach inside its own network.
///
/// Rules:
/// 1. `https` with a host, no user or password, a port from 1 to 65535 when one is given, no
///    space or control character, at most 2,048 characters.
/// 2. Not a host name that means "this machine or this network" (`localhost`, `*.localhost`,
///    `*.local`, `*.localdomain`, `*.internal`, `*.home.arpa`, a trailing dot, a name of one label
///    such as `/etc/hosts` gives the machine's own: a push service's name has a domain), nor an IP
///    literal in a loopback, private, link-local, shared, benchmarking, documentation, discard,
///    multicast, reserved or unspecified range (IPv4 and IPv6, IPv4-mapped and -translated, NAT64
///    and 6to4 included), nor a host the resolver would read as a number (`2130706433`, `127.1`,
///    `0x7f.1`) or a scoped IPv6 literal.
/// 3. `allowLoopbackHTTP` (tests and local development only) also takes `http` to a loopback IP.
/// A name that resolves to such an address is caught before each push (``PushHostCheck``).
enum WebPushEndpoint {
    static let maxLength = 2_048

    static func validate(_ text: String, allowLoopbackHTTP: Bool = false) -> URL? {
        guard text.count <= maxLength, !Validation.holdsControlCharacters(text), !text.contains(where: \.isWhitespace),
            let components = URLComponents(string: text), let url = components.url, let host = components.host?.lowercased(), !host.isEmpty,
            components.user == nil, components.password == nil, (components.port ?? 443) >= 1, (components.port ?? 443) <= 65_535
        else { return nil }
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        let literal = bracketed ? String(host.dropFirst().dropLast()) : host
        let address = IPNetwork.addressBytes(literal)
        // What getaddrinfo would take as a number (decimal, octal, hex, short forms), a scope, a trailing dot.
        let numeric = literal.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
            part.allSatisfy(\.isNumber) || (part.hasPrefix("0x") && part.dropFirst(2).allSatisfy(\.isHexDigit))
        }
        guard address != nil || (!numeric && !literal.contains("%") && !literal.contains(":") && !literal.hasSuffix(".")) else { return nil }
        switch components.scheme?.lowercased() {
        case "https":
            break
        case "http" where allowLoopbackHTTP:
            guard let address, loopback.contains(where: { $0.contains(address) }) else { return nil }
            return url
        default:
            return nil
        }
        if let address { return inside.contains(where: { $0.contains(address) }) ? nil : url }
        let local = !host.contains(".") || [".localhost", ".local", ".localdomain", ".internal", ".home.arpa"].contains(where: host.hasSuffix)
        return local ? nil : url
    }

    /// Whether `address` is in a range rule 2 refuses; loopback passes with `allowLoopback`.
    static func isInside(_ address: [UInt8], allowLoopback: Bool) -> Bool {
        if allowLoopback, loopback.contains(where: { $0.contains(address) }) { return false }
        return inside.contains { $0.contains(address) }
    }

    private static let loopback = ["127.0.0.0/8", "::1/128"].compactMap(IPNetwork.init)
    private static let inside = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.168.0.0/16",
        "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "::/96", "::1/128",
        "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10", "ff00::/8",
    ].compactMap(IPNetwork.init)
}
