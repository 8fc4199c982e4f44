import Foundation
import XCTest

/// A producer decides what its object is, not what the daemon's S3 key may do (docs/guarantees.md "Security
/// model"): against `rclone serve s3`, which does what a signed header says, with each transport.
final class S3ProducerTrustTests: TransportTestCase {
    private func environment(_ root: String) -> [String: String] {
        [
            "HOME": root, "AWS_ACCESS_KEY_ID": RcloneS3Server.accessKey, "AWS_SECRET_ACCESS_KEY": RcloneS3Server.secretKey,
            "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_REGION": "",
            "AWS_DEFAULT_REGION": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
        ]
    }

    private func sidecar(_ spool: TestSpool, _ name: String, _ json: String, _ bytes: [UInt8]) throws {
        try Data(json.utf8).write(to: URL(fileURLWithPath: spool.incoming + "/" + name + ".meta.json"))
        try spool.drop(name, bytes)
    }

    private func failureReasons(_ spool: TestSpool) throws -> [String: String] {
        var reasons: [String: String] = [:]
        for json in spool.files(in: "failed") where json.hasSuffix(".json") {
            let object = try spool.json("failed/" + json)
            reasons[object["originalName"] as? String ?? "?"] = object["failureReason"] as? String
        }
        return reasons
    }

    /// `x-amz-copy-source` made the upload a CopyObject (the prefix then held another bucket's
    /// secret), `x-amz-acl` published the object, on a single PUT and on CreateMultipartUpload:
    /// such sidecars now park their items, and metadata, Content-Type and Content-Disposition
    /// still go through.
    func testSidecars_cannotMakeTheDaemonsKeyCopyPublishOrChooseTheStorageClass() throws {
        let server = try RcloneS3Server.start(self, buckets: ["bucket", "otherbucket"], debugLog: true)
        let secret = Data("the other bucket's secret".utf8)
        try secret.write(to: URL(fileURLWithPath: server.root + "/data/otherbucket/secret.txt"))
        try forEachTransport { transport in
            let spool = try TestSpool(self)
            let prefix = transport == .urlSession ? "u/" : "c/"
            try sidecar(spool, "copy.txt", #"{"headers":{"x-amz-copy-source":"otherbucket/secret.txt"}}"#, Array("mine".utf8))
            try sidecar(spool, "public.txt", #"{"headers":{"x-amz-acl":"public-read"}}"#, Array("mine".utf8))
            try sidecar(spool, "big.bin", #"{"headers":{"X-Amz-Grant-Read":"uri=\"http://acs.amazonaws.com/groups/global/AllUsers\""}}"#,
                        payload((5 << 20) + 1, seed: 3))
            try sidecar(spool, "cold.txt", #"{"headers":{"x-amz-storage-class":"GLACIER"}}"#, Array("cold".utf8))
            try sidecar(spool, "ok.txt",
                        #"{"contentType":"image/jpeg","headers":{"x-amz-meta-camera":"7","Content-Disposition":"attachment"}}"#,
                        Array("ok".utf8))

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", "s3://bucket/" + prefix, "--s3-endpoint", server.endpoint, "--settle", "0",
                 "--s3-part-size", "5M"] + transport.arguments,
                environment: environment(spool.root))

            XCTAssertEqual(result.exitCode, 1, "\(transport): \(result.stderr)")
            XCTAssertEqual(server.keys("bucket").filter { $0.hasPrefix(prefix) }, [prefix + "ok.txt"], "\(transport): \(server.log)")
            XCTAssertNotEqual(server.object("bucket", prefix + "copy.txt"), secret, "never a copy of another bucket's object")
            let reasons = try failureReasons(spool)
            XCTAssertEqual(reasons.keys.sorted(), ["big.bin", "cold.txt", "copy.txt", "public.txt"], "\(transport)")
            XCTAssertTrue(reasons["copy.txt"]?.contains("'x-amz-copy-source' is never sent to S3") == true, "\(reasons)")
            XCTAssertTrue(reasons["public.txt"]?.contains("'x-amz-acl' is not one an item may set on an S3 upload") == true, "\(reasons)")
            XCTAssertTrue(reasons["big.bin"]?.contains("'X-Amz-Grant-Read' is not one an item may set") == true, "\(reasons)")
            XCTAssertTrue(reasons["cold.txt"]?.contains("--s3-allow-header") == true, "\(reasons)")
        }
        XCTAssertFalse(server.log.contains("initiate multipart upload"), "the multipart item never began: \(server.log)")
    }

    /// The operator may let items choose more with `--s3-allow-header` (a name or a prefix), but
    /// never `x-amz-copy-source*`, not even through a wide prefix or its own `--header`.
    func testAllowHeader_letsItemsChooseNamedHeaders_neverCopySource() throws {
        let server = try RcloneS3Server.start(self)
        let spool = try TestSpool(self)
        try sidecar(spool, "std.txt", #"{"headers":{"x-amz-storage-class":"STANDARD","x-amz-tagging":"a=1"}}"#, Array("s".utf8))
        let base = ["drain", "--spool", spool.path, "--url", "s3://bucket/", "--s3-endpoint", server.endpoint, "--settle", "0"]
        let result = try SpooldProcess.run(
            base + ["--s3-allow-header", "x-amz-storage-class", "--s3-allow-header", "X-Amz-Tagg*"], environment: environment(spool.root))
        XCTAssertEqual(result.exitCode, 0, result.stderr + server.log)
        XCTAssertEqual(server.keys("bucket"), ["std.txt"])

        for (arguments, words) in [
            (["--s3-allow-header", "x-amz-copy-source"], "would allow x-amz-copy-source"),
            (["--s3-allow-header", "x-amz-*"], "would allow x-amz-copy-source"),
            (["--s3-allow-header", "x amz"], "not a header name"),
            (["--header", "x-amz-copy-source: otherbucket/secret.txt"], "never sent to S3"),
        ] {
            let refused = try SpooldProcess.run(base + arguments, environment: environment(spool.root))
            XCTAssertEqual(refused.exitCode, 2, "\(arguments): \(refused.stderr)")
            XCTAssertTrue(refused.stderr.contains(words), "\(arguments): \(refused.stderr)")
        }
        let http = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "http://127.0.0.1:9/", "--s3-allow-header", "x-amz-acl"])
        XCTAssertEqual(http.exitCode, 2, http.stderr)
        XCTAssertTrue(http.stderr.contains("--s3-allow-header needs an s3:// URL"), http.stderr)
    }

    /// An item's headers are checked again where the request is built: `enqueue --header` (no
    /// sidecar on the way) cannot make the key publish an object, single PUT or multipart.
    func testEnqueuedItemHeaders_areCheckedWhereTheRequestIsBuilt() throws {
        let server = try RcloneS3Server.start(self, debugLog: true)
        let spool = try TestSpool(self)
        let small = spool.root + "/small.txt"
        let big = spool.root + "/big.bin"
        try Data("s".utf8).write(to: URL(fileURLWithPath: small))
        try Data(payload((5 << 20) + 1, seed: 4)).write(to: URL(fileURLWithPath: big))
        let enqueued = try SpooldProcess.run(["enqueue", "--spool", spool.path, "--header", "x-amz-acl: public-read", small, big])
        XCTAssertEqual(enqueued.exitCode, 0, enqueued.stderr)

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", "s3://bucket/", "--s3-endpoint", server.endpoint, "--settle", "0",
             "--s3-part-size", "5M"],
            environment: environment(spool.root))

        XCTAssertEqual(result.exitCode, 1, result.stderr)
        XCTAssertEqual(server.keys("bucket"), [])
        let reasons = try failureReasons(spool)
        XCTAssertEqual(reasons.count, 2, "\(reasons)")
        for reason in reasons.values {
            XCTAssertTrue(reason.hasPrefix("not sent: header 'x-amz-acl' is not one an item may set on an S3 upload"), reason)
        }
        XCTAssertFalse(server.log.contains("initiate multipart upload"), server.log)
    }
}
