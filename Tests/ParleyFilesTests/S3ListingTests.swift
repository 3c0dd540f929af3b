import NIOCore
import Testing

@testable import ParleyFiles

/// What the S3 store reads from S3's answers without an XML or date library.
@Suite struct S3ListingTests {
    @Test func aTruncatedPage() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bkt</Name><Prefix>p/</Prefix>\
            <ContinuationToken>old</ContinuationToken><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>\
            <Contents><Key>p/a&amp;b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#233;&#x41;</Key><LastModified>2013-05-24T00:00:01.500Z</LastModified>\
            <ETag>&quot;x&quot;</ETag><Size>12</Size><StorageClass>STANDARD</StorageClass></Contents>\
            <Contents><Key>p/z</Key><LastModified>not a date</LastModified><Size>0</Size></Contents>\
            <IsTruncated>true</IsTruncated><NextContinuationToken>1Ab/+9==</NextContinuationToken></ListBucketResult>
            """
        let page = try S3XML.listing(xml)
        #expect(
            page.objects == [
                S3Object(key: "p/a&b <c> \"d\" 'e' éA", size: 12, lastModified: 1_369_353_601.5),
                S3Object(key: "p/z", size: 0, lastModified: .infinity),  // never taken for old
            ])
        #expect(page.next == "1Ab/+9==")
    }

    @Test func theLastPage() throws {
        let xml = #"<ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount></ListBucketResult>"#
        let page = try S3XML.listing(xml)
        #expect(page.objects.isEmpty)
        #expect(page.next == nil)
    }

    @Test func answersThatAreNotListingsAreErrors() {
        #expect(throws: BlobStoreError.self) { try S3XML.listing("<Error><Code>InternalError</Code></Error>") }
        #expect(throws: BlobStoreError.self) { try S3XML.listing("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>") }
        #expect(throws: BlobStoreError.self) { try S3XML.listing("<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>") }
    }

    @Test func errorCodesKeepOnlyLettersAndDigits() {
        #expect(S3Client.errorCode(.init(string: "<Error><Code>NoSuchKey</Code><Message>m</Message></Error>")) == "NoSuchKey")
        #expect(S3Client.errorCode(.init(string: "<Error><Code>Bad\nCode; rm -rf</Code></Error>")) == "BadCodermrf")
        #expect(S3Client.errorCode(.init(string: "")) == "")
        #expect(S3Client.failure("HeadObject", status: 403, body: .init()) == .storage("S3 HeadObject answered 403"))
    }

    @Test func unknownEntitiesStayAsTheyAre() {
        #expect(S3XML.decoded("a &bogus; b &amp") == "a &bogus; b &amp")
        #expect(S3XML.decoded("no entities") == "no entities")
    }

    @Test func datesBothWays() {
        #expect(S3Time.amzDate(0) == "19700101T000000Z")
        #expect(S3Time.amzDate(1_369_353_600) == "20130524T000000Z")
        #expect(S3Time.amzDate(951_825_599) == "20000229T115959Z")  // a leap day
        #expect(S3Time.amzDate(4_102_444_800) == "21000101T000000Z")
        #expect(S3Time.parseISO8601("2013-05-24T00:00:00Z") == 1_369_353_600)
        #expect(S3Time.parseISO8601("2000-02-29T11:59:59.250+00:00") == 951_825_599.25)
        #expect(S3Time.parseISO8601("2013-05-24T00:00:00") == nil)
        #expect(S3Time.parseISO8601("2013-13-24T00:00:00Z") == nil)
        #expect(S3Time.parseISO8601("2013-05-24 00:00:00Z") == nil)
        #expect(S3Time.parseHTTPDate("Fri, 24 May 2013 00:00:00 GMT") == 1_369_353_600)
        #expect(S3Time.parseHTTPDate("Tue, 29 Feb 2000 11:59:59 GMT") == 951_825_599)
        #expect(S3Time.parseHTTPDate("Fri, 24 May 2013 00:00:00 UTC") == nil)
        #expect(S3Time.parseHTTPDate("2013-05-24T00:00:00Z") == nil)
        for seconds: Int64 in [0, 86_399, 86_400, 1_700_000_000, 253_402_300_799] {
            let stamp = S3Time.amzDate(seconds)
            let iso =
                "\(stamp.prefix(4))-\(stamp.dropFirst(4).prefix(2))-\(stamp.dropFirst(6).prefix(2))T"
                + "\(stamp.dropFirst(9).prefix(2)):\(stamp.dropFirst(11).prefix(2)):\(stamp.dropFirst(13).prefix(2))Z"
            #expect(S3Time.parseISO8601(iso) == Double(seconds))
        }
    }
}
