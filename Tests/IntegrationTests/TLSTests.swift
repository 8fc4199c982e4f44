import Foundation
import XCTest

/// HTTPS to a real nginx whose certificate only a private CA vouches for (a self-signed one made
/// with the openssl CLI): trusted with `--transport curl --cacert` (`Transport.Only.curlOptions`),
/// and an outage with either transport without it. Skipped, saying so, without nginx or openssl.
final class TLSTests: TransportTestCase {
    private func startServer() throws -> (NginxServer, certificate: String) {
        let (binary, certificate, key) = try NginxServer.tlsMaterial(for: self)
        let nginx = try NginxServer(binary: binary, tls: (certificate, key))
        addTeardownBlock { nginx.stop() }
        return (nginx, certificate)
    }

    func testCacert_trustsAPrivateCA_andEveryBodyArrivesByteForByte() throws {
        try only(.curlOptions) { _ in
            let (nginx, certificate) = try startServer()
            let spool = try TestSpool(self)
            let files: [(String, [UInt8])] = [("zero.bin", []), ("small.txt", payload(17, seed: 21)), ("large.bin", payload(3 << 20, seed: 22))]
            for (name, bytes) in files { try spool.drop(name, bytes) }

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", "https://127.0.0.1:\(nginx.port)/up/", "--settle", "0",
                 "--cacert", certificate] + transportArguments)

            XCTAssertEqual(result.exitCode, 0, result.stderr + nginx.errorLog)
            for (name, bytes) in files {
                let stored = try Data(contentsOf: URL(fileURLWithPath: nginx.root + "/www/up/" + name))
                XCTAssertTrue(Array(stored) == bytes, "\(name) arrives intact over HTTPS")
            }
        }
    }

    func testWithoutCacert_theUntrustedCertificateIsAnOutage_nothingCounted() throws {
        try forEachTransport { _ in
            let (nginx, _) = try startServer()
            let spool = try TestSpool(self)
            try spool.drop("waiting.txt", [1, 2, 3])

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", "https://127.0.0.1:\(nginx.port)/up/", "--settle", "0",
                 "--max-time", "2"] + transportArguments, timeout: 30)

            XCTAssertEqual(result.exitCode, 5, result.stderr)
            XCTAssertTrue(result.stderr.contains("endpoint unreachable"), result.stderr)
            XCTAssertEqual(spool.files(in: "failed"), [])
            XCTAssertTrue(spool.files(in: "pending").allSatisfy { $0.contains(".a0.") }, "no attempt was used up")
        }
    }
}
