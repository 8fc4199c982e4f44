import Foundation
import SpoolCore
import SpoolTestSupport
import UploadReceiver
import XCTest

/// `--compress gzip` through the built binary, with both transports: an 8 MiB CSV goes in under
/// 40 % of its size and inflates to the exact original at a receiver that inflates and checks
/// gzip bodies (ours), and at an S3 store (`rclone serve s3`), which keeps the object compressed
/// with its `Content-Encoding`; a multipart object's parts are gzip members that inflate as one
/// file. Items in a compressed format go as they are.
final class CompressionTests: TransportTestCase {
    /// A sensor log as CSV, `size` bytes: what metered links carry.
    static func csv(_ size: Int, seed: UInt64) -> [UInt8] {
        var random = SeededRandom(state: seed)
        var text = Array("timestamp,sensor,temperature,humidity,status\n".utf8)
        text.reserveCapacity(size + 100)
        let statuses = ["ok", "ok", "ok", "warn", "fail"]
        while text.count < size {
            let r = random.next()
            let line = "2026-11-\(10 + r % 18)T\(10 + (r >> 8) % 14):\(10 + (r >> 16) % 50):\(10 + (r >> 24) % 50)Z,sensor-\(100 + (r >> 32) % 200),"
                + "\((r >> 40) % 60).\((r >> 46) % 100),\((r >> 52) % 100).\((r >> 58) % 10),\(statuses[Int((r >> 20) % 5)])\n"
            text += Array(line.utf8)
        }
        return Array(text.prefix(size))
    }

    /// Text that compresses to about three quarters (base64 of random bytes): parts of a
    /// multipart upload that stay several at 5 MiB.
    static func base64Text(_ size: Int, seed: UInt64) -> [UInt8] {
        Array(Data(payload(size * 3 / 4 + 3, seed: seed)).base64EncodedData().prefix(size))
    }

    func testEightMiBCSV_goesInUnder40Percent_andInflatesToTheOriginal_compressedFormatsGoAsTheyAre() throws {
        let table = Self.csv(8 << 20, seed: 61)  // made once (0.3 s in a debug build), sent with each transport
        try forEachTransport { _ in
            let receiver = UploadReceiver(script: .always(201))
            let port = try receiver.start()
            addTeardownBlock { receiver.stop() }
            let spool = try TestSpool(self)
            try spool.drop("readings.csv", table)
            try spool.drop("photo.jpg", Array(table.prefix(100_000)))  // compressible, but named as a compressed format
            try spool.drop("note.txt", Array(table.prefix(200)))  // under 1 KiB

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:\(port)/up/", "--settle", "0", "--compress", "gzip",
                 "--content-digest", "sha-256"] + transportArguments)

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            let requests = Dictionary(uniqueKeysWithValues: receiver.requests.map { ($0.target, $0) })
            let csv = try XCTUnwrap(requests["/up/readings.csv"])
            XCTAssertEqual(csv.header("Content-Encoding"), "gzip")
            XCTAssertNotNil(csv.header("Content-Digest"))
            XCTAssertEqual(csv.header("Content-Length"), String(csv.bodyLength))
            XCTAssertLessThan(Double(csv.bodyLength), 0.4 * Double(table.count), "\(csv.bodyLength) B on the wire for \(table.count) B")
            XCTAssertEqual(csv.inflatedLength, Int64(table.count))
            XCTAssertTrue(csv.body == table, "the receiver inflated the exact original")
            for name in ["photo.jpg", "note.txt"] {
                let plain = try XCTUnwrap(requests["/up/" + name])
                XCTAssertNil(plain.header("Content-Encoding"), name)
                XCTAssertNil(plain.inflatedLength, name)
                XCTAssertEqual(plain.body, Array(table.prefix(name == "note.txt" ? 200 : 100_000)), name)
            }
        }
    }

    /// The object is stored compressed, with `Content-Encoding: gzip` (what a reader must
    /// inflate); a multipart object is its parts' gzip members one after another, one gzip file.
    func testS3_storesTheObjectCompressed_withItsContentEncoding_multipartPartsAreMembersOfOneGzipFile() throws {
        let table = Self.csv(8 << 20, seed: 62)  // made once, sent with each transport
        let text = Self.base64Text(9 << 20, seed: 63)
        try forEachTransport { _ in
            let server = try RcloneS3Server.start(self, debugLog: true)
            let spool = try TestSpool(self)
            try spool.drop("readings.csv", table)
            try spool.drop("big.txt", text)  // over --s3-part-size: a multipart upload of several parts

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", "s3://bucket/z/", "--s3-endpoint", server.endpoint, "--settle", "0",
                 "--compress", "gzip", "--s3-part-size", "5M"] + transportArguments,
                environment: [
                    "HOME": spool.root, "AWS_ACCESS_KEY_ID": RcloneS3Server.accessKey, "AWS_SECRET_ACCESS_KEY": RcloneS3Server.secretKey,
                    "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_REGION": "",
                    "AWS_DEFAULT_REGION": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
                ])

            XCTAssertEqual(result.exitCode, 0, result.stderr + server.log)
            let stored = try XCTUnwrap(server.object("bucket", "z/readings.csv"))
            XCTAssertLessThan(Double(stored.count), 0.4 * Double(table.count))
            XCTAssertTrue(GzipInflater.inflate(Array(stored)) == table, "the object inflates to the exact original")
            let big = try XCTUnwrap(server.object("bucket", "z/big.txt"))
            XCTAssertTrue(GzipInflater.inflate(Array(big)) == text, "the parts' members inflate as one file")
            let log = server.log
            XCTAssertGreaterThanOrEqual(log.components(separatedBy: "put multipart upload").count - 1, 2, "several parts")
            let client = S3TestClient(endpoint: server.endpoint, accessKey: RcloneS3Server.accessKey, secretKey: RcloneS3Server.secretKey)
            for key in ["z/readings.csv", "z/big.txt"] {
                XCTAssertEqual(client.send("HEAD", path: "/bucket/" + key)?.headers["content-encoding"], "gzip", key)
            }
            XCTAssertEqual(spool.itemFiles, [])
        }
    }

    /// A compressed multipart upload resumes like any other: the retry sends only the part the
    /// log does not hold, compressed again as it was the first time, and the parts of both
    /// attempts are members of one gzip file of the blob. (Random bytes do not shrink: the parts
    /// keep --s3-part-size, two of them.)
    func testCompressedMultipart_resumesAfterAFailedPart_andThePartsOfBothAttemptsInflateToTheBlob() throws {
        try forEachTransport { _ in
            let created = ScriptedResponse.status(
                200, body: "<InitiateMultipartUploadResult><UploadId>up1</UploadId></InitiateMultipartUploadResult>")
            let part = { (etag: String) in ScriptedResponse.status(200, headers: [("ETag", etag)]) }
            let listed = ScriptedResponse.status(
                200, body: "<ListPartsResult><IsTruncated>false</IsTruncated><Part><PartNumber>1</PartNumber><ETag>\"e1\"</ETag></Part>"
                    + "</ListPartsResult>")
            let receiver = UploadReceiver(script: .sequence(
                [created, part("\"e1\""), .status(500, body: "<Error><Code>InternalError</Code></Error>"), listed, part("\"e2\"")],
                thenAlways: part("\"x\"")))
            let port = try receiver.start()
            addTeardownBlock { receiver.stop() }
            let spool = try TestSpool(self)
            let blob = payload((5 << 20) + 3, seed: 64)
            try spool.drop("two parts.bin", blob)

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", "s3://bucket/k/", "--s3-endpoint", "http://127.0.0.1:\(port)", "--settle", "0",
                 "--s3-part-size", "5M", "--concurrency", "1", "--compress", "gzip", "--retry-base", "0.01", "--max-attempts", "2"]
                    + transportArguments,
                environment: [
                    "HOME": spool.root, "AWS_ACCESS_KEY_ID": RcloneS3Server.accessKey, "AWS_SECRET_ACCESS_KEY": RcloneS3Server.secretKey,
                    "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_REGION": "",
                    "AWS_DEFAULT_REGION": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
                ])

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            let requests = receiver.requests
            XCTAssertEqual(requests.map { "\($0.method) \($0.target.split(separator: "?").last ?? "")" }, [
                "POST uploads=", "PUT partNumber=1&uploadId=up1", "PUT partNumber=2&uploadId=up1",
                "GET max-parts=500&part-number-marker=0&uploadId=up1", "PUT partNumber=2&uploadId=up1", "POST uploadId=up1",
            ])
            guard requests.count == 6 else { return }
            XCTAssertEqual(requests[0].header("Content-Encoding"), "gzip", "the object's coding, set when it is created")
            for request in requests[1...] {
                XCTAssertNil(request.header("Content-Encoding"), "a part's coding is the object's")
                XCTAssertEqual(request.header("x-amz-content-sha256"), SigV4Signer.hex(SHA256.hash(request.body)), "signed as sent")
            }
            XCTAssertEqual(requests[2].body, requests[4].body, "the part sent again is the same bytes")
            XCTAssertTrue(GzipInflater.inflate(requests[1].body + requests[4].body) == blob)
        }
    }
}
