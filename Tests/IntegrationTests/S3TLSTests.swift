import Foundation
import XCTest

/// An S3 store behind a private CA (`rclone serve s3` over TLS with a self-signed certificate;
/// it speaks HTTP/1.1, so also behind nginx offering HTTP/2): multipart uploads with
/// `--transport curl --cacert` (`Transport.Only.curlOptions`), and `spoold purge` aborting one the same way. Without the CA the store cannot be
/// trusted: the purge says the abort was not confirmed and purges the item all the same.
/// Skipped, saying so, without rclone, nginx (for the certificate helper) or openssl.
final class S3TLSTests: TransportTestCase {
    private func environment(_ root: String) -> [String: String] {
        [
            "HOME": root, "AWS_ACCESS_KEY_ID": RcloneS3Server.accessKey, "AWS_SECRET_ACCESS_KEY": RcloneS3Server.secretKey,
            "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_REGION": "",
            "AWS_DEFAULT_REGION": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
        ]
    }

    private func aborts(_ server: RcloneS3Server) -> Int { server.log.components(separatedBy: "abort multipart upload").count - 1 }

    func testMultipartUpload_overHTTPS_withTheStoresCA_arrivesByteExact() throws {
        try only(.curlOptions) { _ in
            let (_, certificate, key) = try NginxServer.tlsMaterial(for: self)
            let server = try RcloneS3Server.start(self, tls: (certificate, key))
            let spool = try TestSpool(self)
            let blob = payload((12 << 20) + 5, seed: 33)
            try spool.drop("v.bin", blob)
            try spool.drop("small.txt", payload(1000, seed: 34))

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", "s3://bucket/tls/", "--s3-endpoint", server.endpoint,
                 "--settle", "0", "--s3-part-size", "5M", "--concurrency", "3", "--cacert", certificate] + transportArguments,
                environment: environment(spool.root), timeout: 60)

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertTrue(server.object("bucket", "tls/v.bin") == Data(blob), "three parts over HTTPS, reassembled")
            XCTAssertTrue(server.object("bucket", "tls/small.txt") == Data(payload(1000, seed: 34)))
            XCTAssertEqual(spool.files(in: "parts"), [])
        }
    }

    /// The parts of a multipart upload share one HTTP/2 connection (`CURLPIPE_MULTIPLEX`): nginx
    /// terminates HTTP/2 and passes each request on to rclone, which checks every signature.
    func testMultipartUpload_overHTTP2_sharesOneConnection_andArrivesByteExact() throws {
        try only(.curlOptions) { _ in
            let (binary, certificate, key) = try NginxServer.tlsMaterial(for: self)
            let store = try RcloneS3Server.start(self)
            let nginx = try NginxServer(binary: binary, tls: (certificate, key), http2: true, proxyTo: store.port)
            addTeardownBlock { nginx.stop() }
            let spool = try TestSpool(self)
            let blob = payload((12 << 20) + 9, seed: 35)
            try spool.drop("h2.bin", blob)

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", "s3://bucket/h2/", "--s3-endpoint", "https://127.0.0.1:\(nginx.port)",
                 "--settle", "0", "--s3-part-size", "5M", "--concurrency", "3", "--cacert", certificate] + transportArguments,
                environment: environment(spool.root), timeout: 60)

            XCTAssertEqual(result.exitCode, 0, result.stderr + nginx.errorLog)
            XCTAssertTrue(store.object("bucket", "h2/h2.bin") == Data(blob), "three parts over HTTP/2, reassembled")
            let requests = nginx.requests
            XCTAssertEqual(Set(requests.map(\.protocol)), ["HTTP/2.0"], "\(requests)")
            XCTAssertEqual(requests.count, 5, "create, three parts, complete: \(requests)")
            XCTAssertEqual(Set(requests.map(\.connection)).count, 1, "one connection for every step")
        }
    }

    func testPurge_overCurlWithTheStoresCA_abortsTheUpload_andWithoutIt_saysItWasNotConfirmed() throws {
        try only(.curlOptions) { _ in
            let (_, certificate, key) = try NginxServer.tlsMaterial(for: self)
            let server = try RcloneS3Server.start(self, debugLog: true, tls: (certificate, key))
            let cases: [(name: String, purgeArguments: [String], confirmed: Bool)] = [
                ("trusted", ["--cacert", certificate] + transportArguments, true),
                ("untrusted", [], false),
            ]
            for (name, purgeArguments, confirmed) in cases {
                let spool = try TestSpool(self)
                try spool.drop("\(name).bin", payload((10 << 20) + 3, seed: 31))
                var env = environment(spool.root)
                env["SPOOLD_CRASH_AT"] = "multipart.after-part:1"
                let crashed = try SpooldProcess.run(
                    ["drain", "--spool", spool.path, "--url", "s3://bucket/\(name)/", "--s3-endpoint", server.endpoint,
                     "--settle", "0", "--s3-part-size", "5M", "--cacert", certificate] + transportArguments,
                    environment: env, timeout: 60)
                XCTAssertEqual(crashed.signal, SIGKILL, "\(name): \(crashed.stderr)")
                XCTAssertEqual(spool.files(in: "parts").count, 1, name)
                let id = try XCTUnwrap(spool.files(in: "inflight").first { $0.hasSuffix(".blob") }?.components(separatedBy: ".a").first)
                let abortsBefore = aborts(server)

                let purged = try SpooldProcess.run(
                    ["purge", "--spool", spool.path, id] + purgeArguments, environment: environment(spool.root), timeout: 60)

                XCTAssertEqual(purged.exitCode, 0, "\(name): \(purged.stderr)")
                XCTAssertEqual(spool.files(in: "inflight") + spool.partLogs, [], name)
                XCTAssertEqual(spool.owedAborts.count, confirmed ? 0 : 1, "\(name): an abort not confirmed stays owed, for the daemon")
                XCTAssertEqual(aborts(server) - abortsBefore, confirmed ? 1 : 0, "\(name): \(server.log.suffix(2000))")
                XCTAssertEqual(purged.stderr.contains("did not confirm aborting"), !confirmed, "\(name): \(purged.stderr)")
            }
        }
    }

    func testPurge_refusesLibcurlOptionsWithURLSession() throws {
        let spool = try TestSpool(self)
        let result = try SpooldProcess.run(["purge", "--spool", spool.path, "--failed", "--cacert", "/etc/hostname"])
        XCTAssertEqual(result.exitCode, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("--cacert needs --transport curl"), result.stderr)
    }
}
