import Testing

@testable import ParleyFiles

/// The signer against the worked examples of AWS's "Signature Calculations for the Authorization
/// Header" page (S3 API reference): their credentials, 2013-05-24, `examplebucket`, us-east-1.
@Suite struct SigV4SignerTests {
    static let signer = SigV4Signer(accessKey: "AKIAIOSFODNN7EXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
    static let timestamp = "20130524T000000Z"
    static let host = "examplebucket.s3.amazonaws.com"

    static func headers(_ more: [(String, String)] = [], payload: String = SigV4Signer.emptyPayloadHash) -> [(String, String)] {
        [("Host", host), ("x-amz-date", timestamp), ("x-amz-content-sha256", payload)] + more
    }

    @Test func getObjectWithARange() {
        let headers = Self.headers([("Range", "bytes=0-9")])
        let canonical = Self.signer.canonicalRequest(method: "GET", path: "/test.txt", query: [], headers: headers, payloadHash: SigV4Signer.emptyPayloadHash)
        #expect(
            canonical.text
                == "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
                + "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\nx-amz-date:20130524T000000Z\n\n"
                + "host;range;x-amz-content-sha256;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            Self.signer.stringToSign(canonical, timestamp: Self.timestamp)
                == "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
                + "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972")
        let authorization = Self.signer.authorization(
            method: "GET", path: "/test.txt", query: [], headers: headers, payloadHash: SigV4Signer.emptyPayloadHash, timestamp: Self.timestamp)
        #expect(
            authorization
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func putObjectWithAKeyThatNeedsEncoding() {
        let payload = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"  // "Welcome to Amazon S3."
        let path = "/" + SigV4Signer.encode("test$file.text", keepingSlashes: true)
        #expect(path == "/test%24file.text")
        let headers = Self.headers([("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")], payload: payload)
        let authorization = Self.signer.authorization(method: "PUT", path: path, query: [], headers: headers, payloadHash: payload, timestamp: Self.timestamp)
        #expect(
            authorization.hasSuffix(
                "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"
                    + "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"))
    }

    @Test func aQueryItemWithoutAValue() {
        let authorization = Self.signer.authorization(
            method: "GET", path: "/", query: [("lifecycle", "")], headers: Self.headers(), payloadHash: SigV4Signer.emptyPayloadHash,
            timestamp: Self.timestamp)
        #expect(authorization.hasSuffix("Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"))
    }

    @Test func queryItemsAreSortedWhateverTheirOrder() {
        let authorization = Self.signer.authorization(
            method: "GET", path: "/", query: [("prefix", "J"), ("max-keys", "2")], headers: Self.headers(),
            payloadHash: SigV4Signer.emptyPayloadHash, timestamp: Self.timestamp)
        #expect(authorization.hasSuffix("Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"))
    }

    /// Continuation tokens are base64 (`/`, `+`, `=`): every byte but the unreserved ones is
    /// escaped, in uppercase hex, in the URL and in what is signed alike.
    @Test func queryValuesAreEscapedAsSigV4Wants() {
        #expect(
            SigV4Signer.canonicalQuery([("prefix", "staging/u1/"), ("continuation-token", "1Ab/+9=="), ("list-type", "2")])
                == "continuation-token=1Ab%2F%2B9%3D%3D&list-type=2&prefix=staging%2Fu1%2F")
        #expect(SigV4Signer.encode("a b~c-d_e.f*g'h(i)j!k&l%m") == "a%20b~c-d_e.f%2Ag%27h%28i%29j%21k%26l%25m")
        #expect(SigV4Signer.encode("é/x") == "%C3%A9%2Fx")
        #expect(SigV4Signer.encode("parley/blobs/ab", keepingSlashes: true) == "parley/blobs/ab")
        #expect(SigV4Signer.canonicalQuery([("uploads", "")]) == "uploads=")
        #expect(SigV4Signer.canonicalQuery([("a", "2"), ("a", "10"), ("B", "x")]) == "B=x&a=10&a=2")
    }

    @Test func headerValuesAreTrimmedAndNamesLowercased() {
        let canonical = Self.signer.canonicalRequest(
            method: "GET", path: "/", query: [], headers: [("X-Amz-Meta-Note", "  two   words "), ("Host", "h")], payloadHash: "UNSIGNED-PAYLOAD")
        #expect(canonical.text == "GET\n/\n\nhost:h\nx-amz-meta-note:two words\n\nhost;x-amz-meta-note\nUNSIGNED-PAYLOAD")
    }

    @Test func theSecretNeverShows() {
        #expect(!"\(Self.signer)".contains("EXAMPLEKEY"))
        #expect(!String(reflecting: Self.signer).contains("EXAMPLEKEY"))
    }
}
