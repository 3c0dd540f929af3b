import Foundation
import ParleyTestSupport

@testable import ParleyFiles

/// S3 stores on moto (``MotoTestServer``), each on a bucket of its own, configured through the URL
/// a server would be given.
enum S3TestStore {
    /// - Parameters:
    ///   - verifying: on the moto server that checks signatures.
    ///   - pageSize: keys per listing page (nil: the service's 1000).
    ///   - secretKey: instead of the server's (a wrong one, to see a refusal).
    ///   - creatingBucket: false for a store whose bucket does not exist.
    static func make(
        verifying: Bool = false, prefix: String? = nil, pageSize: Int? = nil, secretKey: String? = nil, creatingBucket: Bool = true
    ) async throws -> S3BlobStore {
        let server = verifying ? try await MotoTestServer.verifyingSignatures() : try await MotoTestServer.shared()
        var url =
            "s3://parley-\(UUID().uuidString.lowercased())?endpoint=\(server.url)&region=us-east-1&path-style=true"
            + "&access-key=\(escaped(server.accessKey))&secret-key=\(escaped(secretKey ?? server.secretKey))"
        if let prefix { url += "&prefix=\(prefix)" }
        var store = S3BlobStore(location: try S3Location(url, environment: [:]))
        store.listPageSize = pageSize
        if creatingBucket { try await store.createBucket() }
        return store
    }

    /// A query value as a URL carries it (a secret key has `/` and `+`).
    static func escaped(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }
}
