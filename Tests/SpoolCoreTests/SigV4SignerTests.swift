import SpoolCore
import XCTest

/// Checked against AWS's published SigV4 examples (the test suite's get-vanilla/post-vanilla and
/// the S3 documentation's GET Object and PUT Object), and against botocore for a session token
/// and an encoded key.
final class SigV4SignerTests: XCTestCase {
    let suite = SigV4Signer(
        credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1", service: "service")
    let s3 = SigV4Signer(
        credentials: AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    /// 20150830T123600Z, the suite's instant.
    let suiteDate = Timestamp(millisecondsSinceEpoch: 1_440_938_160_000)
    /// 20130524T000000Z, the S3 examples' instant.
    let s3Date = Timestamp(millisecondsSinceEpoch: 1_369_353_600_000)

    func testAmzDate_isCompactUTC() {
        XCTAssertEqual(SigV4Signer.amzDate(suiteDate), "20150830T123600Z")
        XCTAssertEqual(SigV4Signer.amzDate(s3Date), "20130524T000000Z")
    }

    func testGetVanilla_matchesTheSuite() {
        let headers = ["Host": "example.amazonaws.com", "X-Amz-Date": "20150830T123600Z"]
        let canonical = SigV4Signer.canonicalRequest(
            method: "GET", path: "/", query: "", headers: headers, payloadHash: SigV4Signer.emptyPayloadHash)
        XCTAssertEqual(canonical, """
            GET
            /

            host:example.amazonaws.com
            x-amz-date:20150830T123600Z

            host;x-amz-date
            e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
            """)
        XCTAssertEqual(suite.stringToSign(canonicalRequest: canonical, date: suiteDate), """
            AWS4-HMAC-SHA256
            20150830T123600Z
            20150830/us-east-1/service/aws4_request
            bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63
            """)
        XCTAssertEqual(
            suite.authorization(method: "GET", path: "/", query: "", headers: headers,
                                payloadHash: SigV4Signer.emptyPayloadHash, date: suiteDate),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
    }

    func testPostVanilla_matchesTheSuite() {
        let headers = ["Host": "example.amazonaws.com", "X-Amz-Date": "20150830T123600Z"]
        XCTAssertTrue(suite.authorization(
            method: "POST", path: "/", query: "", headers: headers, payloadHash: SigV4Signer.emptyPayloadHash, date: suiteDate
        ).hasSuffix("Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"))
    }

    func testS3GetObject_matchesTheDocumentation() {
        XCTAssertEqual(
            SigV4Signer.hex(s3.signingKey(date: s3Date)),
            "dbb893acc010964918f1fd433add87c70e8b0db6be30c1fbeafefa5ec6ba8378")
        let headers = [
            "Host": "examplebucket.s3.amazonaws.com", "Range": "bytes=0-9", "x-amz-date": "20130524T000000Z",
            "x-amz-content-sha256": SigV4Signer.emptyPayloadHash,
        ]
        XCTAssertEqual(
            s3.authorization(method: "GET", path: "/test.txt", query: "", headers: headers,
                             payloadHash: SigV4Signer.emptyPayloadHash, date: s3Date),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    /// The documentation's PUT of "Welcome to Amazon S3." to `/test$file.text`: the `$` is sent
    /// (and signed) as `%24`, the key encoded the way `URLTemplate` encodes names.
    func testS3PutObject_matchesTheDocumentation() {
        let payload = SigV4Signer.hex(SHA256.hash(Array("Welcome to Amazon S3.".utf8)))
        XCTAssertEqual(payload, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let path = "/" + URLTemplate.encodePath("test$file.text")
        XCTAssertEqual(path, "/test%24file.text")
        let headers = [
            "Host": "examplebucket.s3.amazonaws.com", "Date": "Fri, 24 May 2013 00:00:00 GMT",
            "x-amz-date": "20130524T000000Z", "x-amz-storage-class": "REDUCED_REDUNDANCY", "x-amz-content-sha256": payload,
        ]
        XCTAssertEqual(
            s3.authorization(method: "PUT", path: path, query: "", headers: headers, payloadHash: payload, date: s3Date),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    /// The headers spoold adds to a PUT; the signature was computed by botocore 1.43
    /// (`S3SigV4Auth`) for the same request.
    func testHeaders_withSessionToken_signTheTokenAndMatchBotocore() {
        var signer = s3
        signer.credentials.sessionToken = "SESSIONTOKEN/with+chars="
        signer.region = "eu-west-3"
        let date = Timestamp(millisecondsSinceEpoch: 1_795_401_900_000)  // 20261123T024500Z
        let payload = SigV4Signer.hex(SHA256.hash(Array("hello".utf8)))
        let headers = signer.headers(
            method: "PUT", host: "127.0.0.1:9000", path: "/bucket/pre%20fix/a%2Bb/%C3%A9t%C3%A9.bin",
            payloadHash: payload, date: date)
        XCTAssertEqual(headers["x-amz-date"], "20261123T024500Z")
        XCTAssertEqual(headers["x-amz-content-sha256"], payload)
        XCTAssertEqual(headers["x-amz-security-token"], "SESSIONTOKEN/with+chars=")
        XCTAssertNil(headers["host"], "the HTTP client sends Host from the URL")
        XCTAssertEqual(
            headers["Authorization"],
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261123/eu-west-3/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=dcb249ea9b5905c29107366580a84b1be3bb844644b50c4a1df2b8885582d1ad")
    }

    /// The request's own `x-amz-*` headers (metadata, storage class) are signed: S3 refuses one
    /// that is not (`HeadersNotSigned`). Other headers go unsigned, and the signer's own win.
    func testHeaders_signTheRequestsOwnAmzHeaders_inLowercase() {
        let date = Timestamp(millisecondsSinceEpoch: 1_795_401_900_000)  // 20261123T024500Z
        let own = [
            "X-Amz-Meta-Camera": "cam 7", "x-amz-storage-class": "STANDARD_IA", "x-amz-date": "19700101T000000Z",
            "Content-Type": "image/jpeg", "Idempotency-Key": "k",
        ]
        let headers = s3.headers(
            method: "PUT", host: "127.0.0.1:9000", path: "/bucket/fox.jpg", payloadHash: SigV4Signer.emptyPayloadHash, date: date,
            own: own)

        XCTAssertEqual(headers["x-amz-meta-camera"], "cam 7")
        XCTAssertEqual(headers["x-amz-storage-class"], "STANDARD_IA")
        XCTAssertEqual(headers["x-amz-date"], "20261123T024500Z", "the signer's own date wins")
        XCTAssertNil(headers["Content-Type"])
        XCTAssertNil(headers["content-type"])
        let signedNames = ["host", "x-amz-content-sha256", "x-amz-date", "x-amz-meta-camera", "x-amz-storage-class"]
        let expected = s3.authorization(
            method: "PUT", path: "/bucket/fox.jpg", query: "",
            headers: ["host": "127.0.0.1:9000", "x-amz-date": "20261123T024500Z", "x-amz-content-sha256": SigV4Signer.emptyPayloadHash,
                      "x-amz-meta-camera": "cam 7", "x-amz-storage-class": "STANDARD_IA"],
            payloadHash: SigV4Signer.emptyPayloadHash, date: date)
        XCTAssertEqual(headers["Authorization"], expected)
        XCTAssertTrue(expected.contains("SignedHeaders=" + signedNames.joined(separator: ";") + ","), expected)
    }

    func testCanonicalQuery_sortsByNameThenValue() {
        XCTAssertEqual(SigV4Signer.canonicalQuery("uploadId=x&partNumber=2&a"), "a=&partNumber=2&uploadId=x")
        XCTAssertEqual(SigV4Signer.canonicalQuery(""), "")
    }

    func testCanonicalRequest_trimsAndFoldsHeaderValues() {
        let canonical = SigV4Signer.canonicalRequest(
            method: "PUT", path: "", query: "", headers: ["My-Header": "  a   b\tc  "], payloadHash: "h")
        XCTAssertEqual(canonical, "PUT\n/\n\nmy-header:a b c\n\nmy-header\nh")
    }

    func testCredentials_describeWithoutTheSecret() {
        let credentials = AWSCredentials(accessKeyID: "AKID", secretAccessKey: "s3cr3t", sessionToken: "t0ken")
        XCTAssertFalse("\(credentials)".contains("s3cr3t"))
        XCTAssertFalse("\(credentials)".contains("t0ken"))
    }

    func testSharedFileProfile_readsTheNamedSection() {
        let text = """
            # comment
            [default]
            aws_access_key_id = AKIDDEFAULT
            aws_secret_access_key=secretdefault

            [profile work]
            aws_access_key_id = AKIDWORK
            ; another comment
            AWS_SECRET_ACCESS_KEY = secret=with=equals
            aws_session_token = tok
            """
        XCTAssertEqual(AWSCredentials.sharedFileProfile(text, profile: "default"),
                       ["aws_access_key_id": "AKIDDEFAULT", "aws_secret_access_key": "secretdefault"])
        XCTAssertEqual(AWSCredentials.sharedFileProfile(text, profile: "work"),
                       ["aws_access_key_id": "AKIDWORK", "aws_secret_access_key": "secret=with=equals", "aws_session_token": "tok"])
        XCTAssertNil(AWSCredentials.sharedFileProfile(text, profile: "missing"))
    }
}
