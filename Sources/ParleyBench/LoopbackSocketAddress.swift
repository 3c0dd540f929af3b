import Foundation

/// An IPv4 socket address on 127.0.0.1, kept as the bytes of a Linux `sockaddr_in`.
///
/// Built byte by byte on purpose: reading or writing `sockaddr_in`'s fields ties a Swift file to
/// whichever C module a clean build decides owns that struct (Glibc, or NIO's CNIOLinux, which
/// cannot be imported), and a build that picks the other one fails under MemberImportVisibility.
public struct LoopbackSocketAddress {
    /// family (host order), port (network order), 127.0.0.1, eight bytes of zero padding.
    private var bytes: [UInt8]

    /// The address `127.0.0.1:port` (0 lets `bind` choose).
    public init(port: Int = 0) {
        bytes = withUnsafeBytes(of: sa_family_t(AF_INET)) { Array($0) } + [0, 0, 127, 0, 0, 1] + [UInt8](repeating: 0, count: 8)
        self.port = port
    }

    /// The port, as read back after `getsockname`.
    public var port: Int {
        get { Int(bytes[2]) << 8 | Int(bytes[3]) }
        set {
            bytes[2] = UInt8(truncatingIfNeeded: newValue >> 8)
            bytes[3] = UInt8(truncatingIfNeeded: newValue)
        }
    }

    /// Calls `body` with the address as a `sockaddr` and its length; changes written through the
    /// pointer (by `getsockname`) are kept.
    public mutating func withSockaddr<Result>(_ body: (UnsafeMutablePointer<sockaddr>, inout socklen_t) -> Result) -> Result {
        var length = socklen_t(bytes.count)
        return bytes.withUnsafeMutableBytes { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
    }

    /// Binds `fd` to this address and, when `port` was 0, reads back the port the kernel chose.
    public mutating func bind(_ fd: Int32) -> Bool {
        withSockaddr { address, length in
            Foundation.bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0
        }
    }
}
