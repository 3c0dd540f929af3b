import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one HTTP request for ``HTTPParleyAPI``. Two come with the SDK: ``URLSessionRequester``
/// (Foundation only: the default on Apple platforms, so an app needs no SwiftNIO) and, where
/// AsyncHTTPClient is linked (Linux), `AsyncHTTPClientRequester` (the default there).
public protocol HTTPRequester: Sendable {
    /// Sends `method url` with `headers` and `body`; returns the status and the whole body.
    /// Throws only when no answer came (network down, timeout): an error status is an answer.
    func send(_ method: String, _ url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data)
}

/// ``HTTPRequester`` on `URLSession`.
public struct URLSessionRequester: HTTPRequester {
    private let session: URLSession

    /// Requests through `session` (its own configuration: caching, cookies, proxies).
    public init(session: URLSession = .shared) { self.session = session }

    /// Sends the request with a 30 s timeout.
    public func send(_ method: String, _ url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: url, timeoutInterval: 30)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        let (data, response) = try await session.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}

extension HTTPRequester where Self == URLSessionRequester {
    /// `URLSession.shared`.
    public static var urlSession: URLSessionRequester { URLSessionRequester() }
}
