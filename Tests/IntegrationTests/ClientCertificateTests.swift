import Foundation
import XCTest

/// `--cert`/`--key` against a real server that requires a client certificate
/// (`MutualTLSServer`): items arrive with a certificate its CA issued; without one, or with one
/// it does not trust, the refused handshake pauses uploads (the configuration's fault, said
/// once), no attempt is counted, and the items go once the daemon is started with the right
/// certificate. URLSession cannot present one (`Transport.Only.curlOptions`), nor trust the test's
/// private CA: the rule itself is the attempt core's (`HTTPAttemptTests`, both transports).
final class ClientCertificateTests: TransportTestCase {
    private func start() throws -> (MutualTLSServer, MutualTLSServer.Material) {
        let material = try MutualTLSServer.material(for: self)
        let server = try MutualTLSServer(material)
        addTeardownBlock { server.stop() }
        return (server, material)
    }

    func testRefusedHandshake_pausesWithTheReasonOnce_countsNoAttempt_andTheRightCertificateDelivers() throws {
        try only(.curlOptions) { _ in
            let (server, material) = try start()
            let spool = try TestSpool(self)
            let files: [(String, [UInt8])] = [("one.bin", payload(70_000, seed: 51)), ("two.txt", payload(13, seed: 52))]
            for (name, bytes) in files { try spool.drop(name, bytes) }
            let common = ["drain", "--spool", spool.path, "--url", "https://127.0.0.1:\(server.port)/up/", "--settle", "0",
                          "--cacert", material.ca] + transportArguments

            let refusals: [(certificate: [String], says: [String])] = [
                ([], ["the server requires a client certificate", "the server asked for a client certificate"]),
                (["--cert", material.strangerCertificate, "--key", material.strangerKey],
                 ["unknown_ca", "it refuses the certificate"]),
            ]
            for (certificate, says) in refusals {
                let refused = try SpooldProcess.run(common + certificate + ["--max-time", "1.5"], timeout: 30)
                XCTAssertEqual(refused.exitCode, 5, refused.stderr)
                let paused = refused.stderr.split(separator: "\n").filter { $0.contains("endpoint refuses every upload (TLS: ") }
                XCTAssertEqual(paused.count, 1, "the reason is logged once: \(refused.stderr)")
                XCTAssertTrue(says.contains { paused.first?.contains($0) == true }, refused.stderr)
                XCTAssertEqual(spool.files(in: "failed"), [])
                XCTAssertEqual(spool.files(in: "pending").count, 4)
                XCTAssertTrue(spool.files(in: "pending").allSatisfy { $0.contains(".a0.") }, "no attempt was counted: \(spool.files(in: "pending"))")
                XCTAssertNil(server.stored("one.bin"))
            }

            let delivered = try SpooldProcess.run(common + ["--cert", material.clientCertificate, "--key", material.clientKey])
            XCTAssertEqual(delivered.exitCode, 0, delivered.stderr)
            for (name, bytes) in files { XCTAssertEqual(server.stored(name), bytes, name) }
            XCTAssertEqual(spool.itemFiles, [])
        }
    }

    func testCertificateFiles_areCheckedAtStart_andRefusedWithURLSession() throws {
        let material = try MutualTLSServer.material(for: self)
        let spool = try TestSpool(self)
        let common = ["drain", "--spool", spool.path, "--url", "https://127.0.0.1:9/up/", "--max-time", "1"]
        let curl = Transport.curl.arguments
        let cases: [(arguments: [String], says: String)] = [
            (["--cert", material.clientCertificate, "--key", material.clientKey], "URLSession on Linux (FoundationNetworking) cannot present a client certificate"),
            (curl + ["--cert", material.clientCertificate, "--key", material.strangerKey], "is not the key of the certificate"),
            (curl + ["--cert", material.folder + "/missing.pem", "--key", material.clientKey], "cannot be read"),
            (curl + ["--cert", material.clientKey], "holds no PEM certificate"),
            (curl + ["--cert", material.clientCertificate], "holds no PEM private key"),
            (curl + ["--key", material.clientKey], "needs --cert"),
        ]
        for (arguments, says) in cases {
            let result = try SpooldProcess.run(common + arguments)
            XCTAssertEqual(result.exitCode, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(says), "\(arguments): \(result.stderr)")
        }
    }
}
