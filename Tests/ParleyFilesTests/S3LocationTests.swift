import ParleyFiles
import Testing

/// The `s3://` URL a server is configured with.
@Suite struct S3LocationTests {
    static let keys = ["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "env/secret+key"]

    @Test func aSelfHostedServiceWithEverythingGiven() throws {
        let location = try S3Location(
            "s3://my-bucket?endpoint=http://127.0.0.1:9000&region=eu-west-3&path-style=true&prefix=parley/files"
                + "&access-key=AKIAQUERY&secret-key=wJal%2FrXU%2Btn%3D",
            environment: Self.keys)
        #expect(location.bucket == "my-bucket")
        #expect(location.scheme == "http")
        #expect(location.authority == "127.0.0.1:9000")
        #expect(location.region == "eu-west-3")
        #expect(location.pathStyle)
        #expect(location.prefix == "parley/files/")
        #expect(location.accessKey == "AKIAQUERY")
        #expect(location.secretKey == "wJal/rXU+tn=")  // percent-decoded
    }

    @Test func awsWithTheDefaults() throws {
        let location = try S3Location("s3://my.bucket", environment: Self.keys)
        #expect(location.scheme == "https")
        #expect(location.authority == "s3.us-east-1.amazonaws.com")
        #expect(location.region == "us-east-1")
        #expect(!location.pathStyle)
        #expect(location.prefix == "")
        #expect(location.accessKey == "AKIAENV")
        #expect(location.secretKey == "env/secret+key")
        #expect(try S3Location("s3://my-bucket/?region=ap-south-1", environment: Self.keys).authority == "s3.ap-south-1.amazonaws.com")
    }

    @Test func endpointsWithAndWithoutPorts() throws {
        func authority(_ endpoint: String) throws -> String {
            try S3Location("s3://bkt?endpoint=\(endpoint)", environment: Self.keys).authority
        }
        #expect(try authority("https://minio.example.org") == "minio.example.org")
        #expect(try authority("https://minio.example.org:443/") == "minio.example.org")
        #expect(try authority("http%3A%2F%2Flocalhost%3A9000") == "localhost:9000")
        #expect(try authority("http://[::1]:9000") == "[::1]:9000")
        #expect(try S3Location("s3://bkt?endpoint=http://h:1&path-style=false", environment: Self.keys).pathStyle == false)
    }

    @Test(arguments: [
        ("http://bkt", S3LocationError.notS3URL),
        ("s3://", .invalidBucket),
        ("s3://ab", .invalidBucket),
        ("s3://Upper", .invalidBucket),
        ("s3://-dash", .invalidBucket),
        ("s3://bkt/some/path", .pathAfterBucket),
        ("s3://bkt?region", .malformedQuery),
        ("s3://bkt?acess-key=x", .unknownParameter("acess-key")),
        ("s3://bkt?AKIA1234%2F5678=oops", .unknownParameter("(not shown)")),
        ("s3://bkt?region=a&region=b", .duplicateParameter("region")),
        ("s3://bkt?region=EU%20West", .invalidValue("region")),
        ("s3://bkt?endpoint=ftp://h", .invalidValue("endpoint")),
        ("s3://bkt?endpoint=http://h:99999", .invalidValue("endpoint")),
        ("s3://bkt?endpoint=http://h/path", .invalidValue("endpoint")),
        ("s3://bkt?endpoint=http://", .invalidValue("endpoint")),
        ("s3://bkt?path-style=yes", .invalidValue("path-style")),
        ("s3://bkt?prefix=/abs", .invalidValue("prefix")),
        ("s3://bkt?prefix=a/../b", .invalidValue("prefix")),
        ("s3://bkt?prefix=a%20b", .invalidValue("prefix")),
        ("s3://bkt?secret-key=%ZZ", .invalidValue("secret-key")),
        ("s3://bkt?access-key=a%0Ab&secret-key=s", .invalidValue("access-key")),
    ])
    func badURLsAreRefusedWithTheirReason(url: String, error: S3LocationError) {
        #expect(throws: error) { try S3Location(url, environment: Self.keys) }
    }

    @Test func credentialsAreRequired() {
        #expect(throws: S3LocationError.missingCredentials) { try S3Location("s3://bkt", environment: [:]) }
        #expect(throws: S3LocationError.missingCredentials) { try S3Location("s3://bkt?access-key=a", environment: [:]) }
        #expect(throws: S3LocationError.missingCredentials) { try S3Location("s3://bkt?access-key=a&secret-key=", environment: [:]) }
        #expect(throws: Never.self) { try S3Location("s3://bkt?access-key=a&secret-key=b", environment: [:]) }
    }

    @Test func messagesAndDescriptionsNeverShowTheSecret() throws {
        let location = try S3Location("s3://bkt?secret-key=TOPSECRET&access-key=AKIA", environment: [:])
        #expect(!"\(location)".contains("TOPSECRET"))
        #expect(!String(reflecting: location).contains("TOPSECRET"))
        for url in ["s3://bkt?secret-key=TOPSECRET&bogus=1", "s3://bkt?secret-key=TOPSECRET&region=TOPSECRET", "s3://TOPSECRET?x"] {
            do {
                _ = try S3Location(url, environment: [:])
                Issue.record("\(url) was taken")
            } catch {
                #expect(!error.description.contains("TOPSECRET"))
            }
        }
    }
}
