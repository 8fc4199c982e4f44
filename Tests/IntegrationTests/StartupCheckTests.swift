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

    /// `--header-file` and the shared credentials file are read whole under the one cap on small
    /// texts (64 KiB, as a sidecar and a `--success-json` answer): a file of exactly that is
    /// read, a larger one or one that is not UTF-8 is a usage error that names it.
    func testOperatorFiles_overTheSmallTextCap_orNotUTF8_areUsageErrors() throws {
        let spool = try TestSpool(self)
        func file(_ name: String, _ bytes: [UInt8]) throws -> String {
            let path = spool.root + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            XCTAssertEqual(chmod(path, 0o600), 0)
            return path
        }
        let header = Array("X-Token: t\n".utf8)
        let comment = Array("# ".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 65536 - header.count - 3) + [10]
        let exactly = try file("exactly", header + comment)
        let over = try file("over", header + comment + [10])
        let latin1 = try file("latin1", Array("X-Name: ".utf8) + [0xE9, 10])
        let drain = ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:9/", "--settle", "0"]

        let read = try SpooldProcess.run(drain + ["--header-file", exactly])
        XCTAssertEqual(read.exitCode, 0, read.stderr)
        for (path, words) in [(over, "larger than 65536 bytes"), (latin1, "not UTF-8 text")] {
            let refused = try SpooldProcess.run(drain + ["--header-file", path])
            XCTAssertEqual(refused.exitCode, 2, refused.stderr)
            XCTAssertTrue(refused.stderr.contains("--header-file \(path): \(words)"), refused.stderr)
        }

        let environment = [
            "HOME": spool.root, "AWS_SHARED_CREDENTIALS_FILE": over, "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
            "AWS_PROFILE": "",
        ]
        let credentials = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", "s3://bucket/", "--s3-endpoint", "http://127.0.0.1:9"], environment: environment)
        XCTAssertEqual(credentials.exitCode, 2, credentials.stderr)
        XCTAssertTrue(credentials.stderr.contains("S3 credentials file \(over): not UTF-8 text of at most 65536 bytes"), credentials.stderr)
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

    /// `purge` reads the same `--header-file` (for its tus terminations) and says the same of one
    /// that others may read; it still purges.
    func testPurge_warnsOfAHeaderFileOthersMayRead() throws {
        let spool = try TestSpool(self)
        let headers = spool.root + "/headers"
        try Data("Authorization: Bearer x-secret-2\n".utf8).write(to: URL(fileURLWithPath: headers))
        let source = spool.root + "/item.txt"
        try Data("x".utf8).write(to: URL(fileURLWithPath: source))
        func purge() throws -> SpooldProcess.Result {
            let id = try XCTUnwrap(SpooldProcess.run(["enqueue", "--spool", spool.path, source]).lines.first)
            let result = try SpooldProcess.run(["purge", "--spool", spool.path, "--header-file", headers, id])
            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertEqual(result.lines, [id])
            return result
        }
        XCTAssertEqual(chmod(headers, 0o644), 0)
        let open = try purge()
        XCTAssertTrue(open.stderr.contains("purge: warning: secrets are read from \(headers), but its mode 0644 lets other users read it"), open.stderr)
        XCTAssertFalse(open.stderr.contains("x-secret-2"), open.stderr)

        XCTAssertEqual(chmod(headers, 0o600), 0)
        XCTAssertFalse(try purge().stderr.contains("secrets are read from"))
    }
}
