import Foundation
import ParleyCore

/// Which push-service endpoints a client may register: the server will POST to them, so an endpoint
/// is a request the server makes on a user's behalf and must not reach inside its own network.
///
/// Rules:
/// 1. `https` with a host, no user or password, a port from 1 to 65535 when one is given, no
///    space or control character, ASCII only (a browser gives its endpoint as a serialized URL), at
///    most 2,048 characters; a host name of letters, digits and hyphens in labels of 1–63 characters.
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
        guard text.utf8.count <= maxLength, text.unicodeScalars.allSatisfy(\.isASCII), !Validation.holdsControlCharacters(text),
            !text.contains(where: \.isWhitespace), let components = URLComponents(string: text), let url = components.url,
            let host = components.host?.lowercased(), !host.isEmpty, components.user == nil, components.password == nil, hasValidPort(text)
        else { return nil }
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        let literal = bracketed ? String(host.dropFirst().dropLast()) : host
        let address = IPNetwork.addressBytes(literal)
        // What getaddrinfo would take as a number (decimal, octal, hex, short forms), a scope, a trailing dot.
        let numeric = literal.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
            part.allSatisfy(\.isNumber) || (part.hasPrefix("0x") && part.dropFirst(2).allSatisfy(\.isHexDigit))
        }
        guard address != nil || (!numeric && !literal.contains("%") && !literal.contains(":") && isHostName(literal)) else { return nil }
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

    /// Rule 1's port: none, or 1–65535 in digits (URLComponents reads one that overflows as none; the
    /// text is ASCII by then, so a digit is 0–9).
    private static func hasValidPort(_ text: String) -> Bool {
        guard let start = text.range(of: "://")?.upperBound else { return false }
        let authority = text[start...].prefix { !"/?#".contains($0) }
        let afterHost = authority.hasPrefix("[") ? authority[(authority.firstIndex(of: "]") ?? authority.endIndex)...].dropFirst() : authority
        guard let colon = afterHost.lastIndex(of: ":") else { return true }
        let port = afterHost[afterHost.index(after: colon)...]
        return (1...5).contains(port.count) && port.allSatisfy(\.isNumber) && (1...65_535).contains(Int(port) ?? 0)
    }

    /// Rule 1's name: labels of `a–z`, `0–9` and `-` (not first or last), 1–63 characters, at most 253 in all.
    private static func isHostName(_ host: String) -> Bool {
        host.utf8.count <= 253
            && host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
                (1...63).contains(label.count) && label.first != "-" && label.last != "-"
                    && label.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
            }
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
        // IETF protocol assignments (Teredo, benchmarking, ORCHID), the new documentation range, the
        // old site-local range and the 6to4 relay's anycast: no push service is there.
        "2001::/23", "3fff::/20", "fec0::/10", "192.88.99.0/24",
    ].compactMap(IPNetwork.init)
}
