/// Why an S3 URL was refused. The messages name the parameter at fault, never a value from the
/// URL: the URL may carry the secret key, and these messages end up in logs.
public enum S3LocationError: Error, Equatable, Sendable, CustomStringConvertible {
    case notS3URL
    case invalidBucket
    case pathAfterBucket
    case malformedQuery
    case unknownParameter(String)
    case duplicateParameter(String)
    case invalidValue(String)
    case missingCredentials

    public var description: String {
        switch self {
        case .notS3URL: "the S3 URL does not start with s3://"
        case .invalidBucket: "the S3 URL's bucket name is not valid (3 to 63 of a-z, 0-9, '.' and '-')"
        case .pathAfterBucket: "the S3 URL has a path after the bucket: give the key prefix as prefix="
        case .malformedQuery: "the S3 URL's query has an item that is not name=value (or a bad %-escape in a name)"
        case .unknownParameter(let name):
            "the S3 URL has an unknown parameter \(name) (known: endpoint, region, path-style, prefix, access-key, secret-key)"
        case .duplicateParameter(let name): "the S3 URL gives \(name) twice"
        case .invalidValue(let name): "the S3 URL's \(name) is not valid"
        case .missingCredentials:
            "the S3 URL has no credentials: give access-key= and secret-key=, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        }
    }
}
