#if os(Linux)
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// ``HTTPRequester`` on AsyncHTTPClient (SwiftNIO): the default on Linux.
public struct AsyncHTTPClientRequester: HTTPRequester {
    private let client: HTTPClient

    /// Requests through `client`'s connection pool.
    public init(client: HTTPClient = .shared) { self.client = client }

    /// Sends the request with a 30 s timeout; bodies up to 16 MiB.
    public func send(_ method: String, _ url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), Data(bytes.readableBytesView))
    }
}
#endif
