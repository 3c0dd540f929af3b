import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// Blobs in an S3-compatible service (AWS S3, MinIO, Garage, moto…): `blobs/<sha256>` and, while an
/// upload is staged, `staging/<upload id>/<offset, 20 digits>`, under the location's prefix.
///
/// S3 objects cannot be appended to, so a staging is a run of part objects, each PUT whole once up
/// to 8 MiB arrived (memory stays bounded); the staged size is the sum of their sizes. A commit
/// streams the parts through SHA-256 and writes the blob with one PUT, or with a multipart upload
/// beyond 8 MiB, then deletes the parts. Requests are signed with ``SigV4Signer``.
public struct S3BlobStore: BlobStore {
    public let location: S3Location
    let client: S3Client
    /// Bytes per staging part and per part of a multipart upload (S3's minimum part is 5 MiB).
    let partSize = 8 << 20
    /// Keys per ListObjectsV2 page (nil: the service's default, 1000); tests set it low to page.
    var listPageSize: Int?

    public init(location: S3Location, httpClient: HTTPClient = .shared) {
        self.location = location
        self.client = S3Client(location: location, http: httpClient)
    }

    /// Creates the bucket: for tests and a first setup.
    /// A bucket of ours that exists already is fine.
    public func createBucket() async throws {
        // us-east-1 refuses a LocationConstraint naming itself; every other region wants one.
        let body =
            location.region == "us-east-1"
            ? nil
            : ByteBuffer(
                string: #"<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">"#
                    + "<LocationConstraint>\(location.region)</LocationConstraint></CreateBucketConfiguration>")
        let answer = try await client.call(.PUT, nil, body: body, op: "CreateBucket", accepting: [409])
        if answer.status == 409, S3Client.errorCode(answer.body) != "BucketAlreadyOwnedByYou" {
            throw S3Client.failure("CreateBucket", status: answer.status, body: answer.body)
        }
    }

    func objectKey(_ key: BlobKey) -> String { "\(location.prefix)blobs/\(key.sha256)" }
    func partsPrefix(_ upload: String) -> String { "\(location.prefix)staging/\(upload)/" }
    func partKey(_ upload: String, at offset: Int64) -> String {
        let digits = String(offset)
        return partsPrefix(upload) + String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    func deleteObject(_ key: String) async throws {
        _ = try await client.call(.DELETE, key, op: "DeleteObject", accepting: [404])
    }

    public func size(of key: BlobKey) async throws -> Int64? {
        let answer = try await client.call(.HEAD, objectKey(key), op: "HeadObject", accepting: [404])
        guard answer.status != 404 else { return nil }
        guard let length = answer.headers.first(name: "content-length").flatMap({ Int64($0) }) else {
            throw BlobStoreError.storage("S3 HeadObject answered without a Content-Length")
        }
        return length
    }

    public func modified(_ key: BlobKey) async throws -> Double? {
        let answer = try await client.call(.HEAD, objectKey(key), op: "HeadObject", accepting: [404])
        guard answer.status != 404 else { return nil }
        guard let modified = answer.headers.first(name: "last-modified").flatMap(S3Time.parseHTTPDate) else {
            throw BlobStoreError.storage("S3 HeadObject answered without a readable Last-Modified")
        }
        return modified
    }

    public func delete(_ key: BlobKey) async throws {
        try await deleteObject(objectKey(key))
    }

    public func blobs(olderThan date: Double) async throws -> [BlobKey] {
        let prefix = "\(location.prefix)blobs/"
        return try await client.list(prefix, pageSize: listPageSize).compactMap { object in
            object.lastModified < date ? BlobKey(sha256: String(object.key.dropFirst(prefix.count))) : nil
        }
    }

    public func staged(olderThan date: Double) async throws -> [String] {
        let prefix = "\(location.prefix)staging/"
        // A staging was last written when its newest part was.
        var newest: [String: Double] = [:]
        for object in try await client.list(prefix, pageSize: listPageSize) {
            guard let upload = object.key.dropFirst(prefix.count).split(separator: "/").first.map(String.init),
                (try? BlobStoreError.check(upload)) != nil
            else { continue }
            newest[upload] = max(newest[upload] ?? -.infinity, object.lastModified)
        }
        return newest.filter { $0.value < date }.map(\.key).sorted()
    }
}
