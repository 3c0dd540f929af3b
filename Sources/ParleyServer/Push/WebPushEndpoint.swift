import Foundation

/// Which push-service endpoints a client may register: the server will POST to them, so an endpoint
/// is a request the server makes on a user's behalf and must not reach inside its own network.
///
/// Rules:
/// 1. `https` with a host, no user or password, at most 2,048 characters.
/// 2. Not a host name that means "this machine or this network" (`localhost`, `*.localhost`,
///    `*.local`, `*.internal`, `*.home.arpa`), nor an IP literal in a loopback, private,
///    link-local, shared or unspecified range (IPv4 and IPv6, IPv4-mapped included).
/// 3. `allowLoopbackHTTP` (tests and local development only) also takes `http` to a loopback IP.
/// A name that resolves to a private address is not caught here (it would take resolving at send
/// time, against DNS rebinding too); deployments that need that put the server behind an egress
/// proxy.
enum WebPushEndpoint {
    static let maxLength = 2_048

    static func validate(_ text: String, allowLoopbackHTTP: Bool = false) -> URL? {
        guard text.count <= maxLength, let components = URLComponents(string: text), let url = components.url,
            let host = components.host?.lowercased(), !host.isEmpty, components.user == nil, components.password == nil
        else { return nil }
        let literal = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let address = IPNetwork.addressBytes(literal)
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
        let local = host == "localhost" || [".localhost", ".local", ".internal", ".home.arpa"].contains(where: host.hasSuffix)
        return local ? nil : url
    }

    private static let loopback = ["127.0.0.0/8", "::1/128"].compactMap(IPNetwork.init)
    private static let inside = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16",
        "::/128", "::1/128", "fc00::/7", "fe80::/10",
    ].compactMap(IPNetwork.init)
}
