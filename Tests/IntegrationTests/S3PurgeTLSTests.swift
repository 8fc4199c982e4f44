import Foundation
import XCTest

/// `spoold purge --transport curl --cacert`: the AbortMultipartUpload of a purged item reaches a
/// store behind a private CA (`rclone serve s3` over TLS with a self-signed certificate). Without
/// the CA the store cannot be trusted: the purge says the abort was not confirmed and purges the
/// item all the same. Skipped, saying so, without rclone, nginx (for the certificate helper) or openssl.
final class S3PurgeTLSTests: XCTestCase {
    private func environment(_ root: String) -> [String: String] {
        [
            "HOME": root, "AWS_ACCESS_KEY_ID": RcloneS3Server.accessKey, "AWS_SECRET_ACCESS_KEY": RcloneS3Server.secretKey,
            "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_REGION": "",
            "AWS_DEFAULT_REGION": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
        ]
    }

    private func aborts(_ server: RcloneS3Server) -> Int { server.log.components(separatedBy: "abort multipart upload").count - 1 }

    func testPurge_overCurlWithTheStoresCA_abortsTheUpload_andWithoutIt_saysItWasNotConfirmed() throws {
        let (_, certificate, key) = try NginxServer.tlsMaterial(for: self)
        let server = try RcloneS3Server.start(self, debugLog: true, tls: (certificate, key))
        let cases: [(name: String, purgeArguments: [String], confirmed: Bool)] = [
            ("trusted", ["--transport", "curl", "--cacert", certificate], true),
            ("untrusted", [], false),
        ]
        for (name, purgeArguments, confirmed) in cases {
            let spool = try TestSpool(self)
            try spool.drop("\(name).bin", payload((10 << 20) + 3, seed: 31))
            var env = environment(spool.root)
            env["SPOOLD_CRASH_AT"] = "multipart.after-part:1"
            let crashed = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", "s3://bucket/\(name)/", "--s3-endpoint", server.endpoint,
                 "--settle", "0", "--s3-part-size", "5M", "--transport", "curl", "--cacert", certificate],
                environment: env, timeout: 60)
            XCTAssertEqual(crashed.signal, SIGKILL, "\(name): \(crashed.stderr)")
            XCTAssertEqual(spool.files(in: "parts").count, 1, name)
            let id = try XCTUnwrap(spool.files(in: "inflight").first { $0.hasSuffix(".json") }?.components(separatedBy: ".a").first)
            let abortsBefore = aborts(server)

            let purged = try SpooldProcess.run(
                ["purge", "--spool", spool.path, id] + purgeArguments, environment: environment(spool.root), timeout: 60)

            XCTAssertEqual(purged.exitCode, 0, "\(name): \(purged.stderr)")
            XCTAssertEqual(spool.files(in: "inflight") + spool.files(in: "parts"), [], name)
            XCTAssertEqual(aborts(server) - abortsBefore, confirmed ? 1 : 0, "\(name): \(server.log.suffix(2000))")
            XCTAssertEqual(purged.stderr.contains("did not confirm aborting"), !confirmed, "\(name): \(purged.stderr)")
        }
    }

    func testPurge_refusesLibcurlOptionsWithURLSession() throws {
        let spool = try TestSpool(self)
        let result = try SpooldProcess.run(["purge", "--spool", spool.path, "--failed", "--cacert", "/etc/hostname"])
        XCTAssertEqual(result.exitCode, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("--cacert needs --transport curl"), result.stderr)
    }
}
