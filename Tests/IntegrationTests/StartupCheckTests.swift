import Foundation
import XCTest

/// What is checked when the daemon starts, before any upload.
final class StartupCheckTests: TransportTestCase {
    /// `--cacert /etc` or a file without a certificate was accepted, and then every upload looped
    /// on "error setting certificate file": checked at start now, a usage error (exit 2).
    func testCACertAndCAPath_thatLibcurlCannotUse_areUsageErrors() throws {
        try only(.curlOptions) { _ in
            let spool = try TestSpool(self)
            let notPEM = spool.root + "/not-a-bundle.pem"
            try Data("just text\n".utf8).write(to: URL(fileURLWithPath: notPEM))
            let empty = spool.root + "/empty-capath"
            try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
            let base = ["drain", "--spool", spool.path, "--url", "https://127.0.0.1:9/"] + transportArguments
            for (option, value, words) in [
                ("--cacert", "/etc", "is not a regular file"), ("--cacert", notPEM, "holds no PEM certificate"),
                ("--cacert", spool.root + "/missing.pem", "cannot be read"), ("--capath", empty, "holds no hashed certificate"),
                ("--capath", notPEM, "is not a directory"),
            ] {
                let result = try SpooldProcess.run(base + [option, value])
                XCTAssertEqual(result.exitCode, 2, "\(option) \(value): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains("\(option) '\(value)' \(words)"), result.stderr)
            }
        }
    }

    /// The shared credentials file was read whoever could read or change it; a file of secrets
    /// that others may read, or that another user owns, is now said at start (a warning: the
    /// file is the operator's to place). The same for `--header-file`.
    func testSecretFiles_readableByOthersOrOwnedByAnotherUser_areWarnedAbout() throws {
        let spool = try TestSpool(self)
        let credentials = spool.root + "/credentials"
        try Data("[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = secret-example\n".utf8)
            .write(to: URL(fileURLWithPath: credentials))
        let headers = spool.root + "/headers"
        try Data("Authorization: Bearer x-secret-1\n".utf8).write(to: URL(fileURLWithPath: headers))
        let environment = [
            "HOME": spool.root, "AWS_SHARED_CREDENTIALS_FILE": credentials, "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
            "AWS_PROFILE": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
        ]
        func run() throws -> String {
            try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", "s3://bucket/", "--s3-endpoint", "http://127.0.0.1:9", "--header-file", headers],
                environment: environment).stderr
        }
        XCTAssertEqual(chmod(credentials, 0o644), 0)
        XCTAssertEqual(chmod(headers, 0o666), 0)
        let open = try run()
        XCTAssertTrue(open.contains("secrets are read from \(credentials), but its mode 0644 lets other users read it"), open)
        XCTAssertTrue(open.contains("secrets are read from \(headers), but its mode 0666 lets other users read and change it"), open)
        XCTAssertFalse(open.contains("secret-example") || open.contains("x-secret-1"), open)

        XCTAssertEqual(chmod(credentials, 0o600), 0)
        XCTAssertEqual(chmod(headers, 0o600), 0)
        XCTAssertFalse(try run().contains("secrets are read from"))

        if geteuid() == 0 {
            XCTAssertEqual(chown(credentials, 1234, 1234), 0)
            let foreign = try run()
            XCTAssertTrue(foreign.contains("secrets are read from \(credentials), but it belongs to uid 1234"), foreign)
        }
    }
}
