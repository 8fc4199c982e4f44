import Foundation
import UploadReceiver
import XCTest

/// Producers are not trusted (docs/guarantees.md "Security model"): the attacks a local producer can try
/// through incoming/ and sidecars, run against the built binary with each transport.
final class ProducerTrustTests: TransportTestCase {
    private func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    private func failureReasons(_ spool: TestSpool) throws -> [String] {
        try spool.files(in: "failed").filter { $0.hasSuffix(".json") }.map { try spool.json("failed/" + $0)["failureReason"] as? String ?? "" }
    }

    /// A sidecar whose `contentType` or header holds CR/LF would put its own lines on the wire
    /// (`Host: evil.example`, `Transfer-Encoding: chunked`, a second request): refused where it
    /// enters, the item parked in failed/ with why, nothing sent.
    func testSidecarHeaderInjection_parksTheItem_nothingReachesTheWire() throws {
        try forEachTransport { transport in
            let receiver = UploadReceiver(script: .always(201))
            try receiver.start()
            defer { receiver.stop() }
            let spool = try TestSpool(self)
            try write(#"{"contentType":"text/plain\r\nHost: evil.example\r\nTransfer-Encoding: chunked"}"#,
                      to: spool.incoming + "/a.txt.meta.json")
            try spool.drop("a.txt", Array("hello".utf8))
            try write(#"{"contentType":"text/plain\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"}"#,
                      to: spool.incoming + "/b.txt.meta.json")
            try spool.drop("b.txt", Array("hello".utf8))
            try write(#"{"headers":{"X-Camera":"7\nX-Injected: 1"}}"#, to: spool.incoming + "/c.txt.meta.json")
            try spool.drop("c.txt", Array("hello".utf8))
            try write(#"{"headers":{"X-Camera":"trap\t7"}}"#, to: spool.incoming + "/fine.txt.meta.json")
            try spool.drop("fine.txt", Array("fine".utf8))

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"] + transport.arguments)

            XCTAssertEqual(result.exitCode, 1, "\(transport): \(result.stderr)")
            XCTAssertEqual(receiver.requests.map(\.target), ["/up/fine.txt"], "\(transport): only the fine file went out")
            XCTAssertEqual(receiver.requests.first?.header("X-Camera"), "trap\t7")
            let reasons = try failureReasons(spool).sorted()
            XCTAssertEqual(reasons.count, 3, "\(transport): \(reasons)")
            XCTAssertEqual(reasons.filter { $0.contains("'contentType' cannot be sent as a Content-Type header: the value contains a carriage return (CR)") }.count, 2, "\(reasons)")
            XCTAssertEqual(reasons.filter { $0.contains("header 'X-Camera' is not a valid HTTP header: the value contains a line feed (LF)") }.count, 1, "\(reasons)")
            XCTAssertFalse(result.stderr.contains("evil.example") || result.stderr.contains("smuggled"), "values are not repeated")
        }
    }

    /// The check where each transport builds its request: an item json edited by hand (no sidecar
    /// check on the way) with a line break in its content type or a header is refused, unsent.
    func testHandEditedJSON_withALineBreak_isRefusedWhereTheRequestIsBuilt() throws {
        try forEachTransport { transport in
            let receiver = UploadReceiver(script: .always(201))
            try receiver.start()
            defer { receiver.stop() }
            let spool = try TestSpool(self)
            let file = spool.root + "/a.txt"
            try write("hello", to: file)
            let enqueued = try SpooldProcess.run(["enqueue", "--spool", spool.path, file, file])
            XCTAssertEqual(enqueued.exitCode, 0, enqueued.stderr)
            let jsons = spool.files(in: "pending").filter { $0.hasSuffix(".json") }
            XCTAssertEqual(jsons.count, 2)
            for (n, json) in jsons.enumerated() {
                var object = try spool.json("pending/" + json)
                if n == 0 { object["contentType"] = "text/plain\r\nHost: evil.example" } else { object["headers"] = ["X-A": "1\r\n\r\nGET /x HTTP/1.1"] }
                try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: spool.path + "/pending/" + json))
            }

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"] + transport.arguments)

            XCTAssertEqual(result.exitCode, 1, "\(transport): \(result.stderr)")
            XCTAssertEqual(receiver.requests.count, 0, "\(transport): nothing went out")
            let reasons = try failureReasons(spool).sorted()
            XCTAssertEqual(reasons, [
                "not sent: header Content-Type: the value contains a carriage return (CR)",
                "not sent: header X-A: the value contains a carriage return (CR)",
            ], "\(transport)")
        }
    }

    /// The same rule where values enter from the operator: `--header`, `--header-file`,
    /// `--header-env`, `enqueue --content-type` with a control character are usage errors, and a
    /// secret's value is never repeated.
    func testControlCharactersInOptionsAndFiles_areUsageErrors() throws {
        let spool = try TestSpool(self)
        let url = "http://127.0.0.1:9/up/"
        let header = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", url, "--header", "X-A: 1\u{1B}[2J"])
        XCTAssertEqual(header.exitCode, 2, header.stderr)
        XCTAssertTrue(header.stderr.contains("the value contains the control character 0x1B"), header.stderr)

        let file = spool.root + "/secret-headers"
        try write("Authorization: Bearer s3cr3t\u{7}\n", to: file)
        let headerFile = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", url, "--header-file", file])
        XCTAssertEqual(headerFile.exitCode, 2, headerFile.stderr)
        XCTAssertTrue(headerFile.stderr.contains("line 1: the value contains the control character 0x7"), headerFile.stderr)
        XCTAssertFalse(headerFile.stderr.contains("s3cr3t"), "the secret is not repeated: \(headerFile.stderr)")

        let headerEnv = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", url, "--header-env", "TOKEN_HEADER"],
            environment: ["TOKEN_HEADER": "Authorization: Bearer s3cr3t\rX: 1"])
        XCTAssertEqual(headerEnv.exitCode, 2, headerEnv.stderr)
        XCTAssertTrue(headerEnv.stderr.contains("carriage return"), headerEnv.stderr)
        XCTAssertFalse(headerEnv.stderr.contains("s3cr3t"), headerEnv.stderr)

        let payload = spool.root + "/p.bin"
        try write("x", to: payload)
        let type = try SpooldProcess.run(["enqueue", "--spool", spool.path, "--content-type", "text/plain\u{1}x", payload])
        XCTAssertEqual(type.exitCode, 2, type.stderr)
        XCTAssertTrue(type.stderr.contains("invalid --content-type: the value contains the control character 0x1"), type.stderr)
    }
}

extension ProducerTrustTests {
    /// A sidecar planted by uid 1234 beside uid 1235's file sent the victim's data with the
    /// attacker's `Authorization` (it even replaced the operator's `--header Authorization`). A
    /// sidecar is now taken only from the file's owner (or root); and even the owner's own sidecar
    /// never replaces a credential header the operator configured.
    func testAnotherUsersSidecar_isNotTaken_andNoSidecarReplacesTheOperatorsCredential() throws {
        let (attacker, victim) = (1234, 1235)
        try OtherUser.require(attacker)
        let receiver = UploadReceiver(script: .always(201))
        try receiver.start()
        defer { receiver.stop() }
        let spool = try TestSpool(self)
        // A shared incoming/, as for several producers: anyone may create files, only their owner
        // may rename or remove them.
        XCTAssertEqual(chmod(spool.incoming, 0o1777), 0)
        let incoming = spool.incoming
        XCTAssertEqual(try OtherUser.run(attacker, #"printf '{"headers":{"Authorization":"Bearer attacker"},"url":"http://127.0.0.1:9/loot"}' > "$1/report.pdf.meta.json""#, arguments: [incoming]), 0)
        XCTAssertEqual(try OtherUser.run(victim, #"printf 'victim data' > "$1/.report.tmp" && mv "$1/.report.tmp" "$1/report.pdf""#, arguments: [incoming]), 0)
        // The victim's own sidecar is taken, but its Authorization does not replace the operator's.
        XCTAssertEqual(try OtherUser.run(victim, #"printf '{"headers":{"X-Camera":"7","Authorization":"Bearer mine"}}' > "$1/own.pdf.meta.json" && printf own > "$1/.own.tmp" && mv "$1/.own.tmp" "$1/own.pdf""#, arguments: [incoming]), 0)
        // Root's sidecar may speak for anyone's file.
        try Data(#"{"headers":{"X-Camera":"8"}}"#.utf8).write(to: URL(fileURLWithPath: incoming + "/rooted.pdf.meta.json"))
        XCTAssertEqual(try OtherUser.run(victim, #"printf rooted > "$1/.rooted.tmp" && mv "$1/.rooted.tmp" "$1/rooted.pdf""#, arguments: [incoming]), 0)

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--allow-url", "http://127.0.0.1:9/",
             "--header", "Authorization: Bearer operator"])

        XCTAssertEqual(result.exitCode, 1, result.stderr)
        let byTarget = Dictionary(uniqueKeysWithValues: receiver.requests.map { ($0.target, $0) })
        XCTAssertEqual(byTarget.keys.sorted(), ["/up/own.pdf", "/up/rooted.pdf"], "the victim's report was not sent anywhere")
        XCTAssertEqual(byTarget["/up/own.pdf"]?.header("X-Camera"), "7")
        XCTAssertEqual(byTarget["/up/own.pdf"]?.header("Authorization"), "Bearer operator", "the operator's credential stands")
        XCTAssertEqual(byTarget["/up/rooted.pdf"]?.header("X-Camera"), "8")
        XCTAssertFalse(receiver.requests.contains { $0.body == Array("victim data".utf8) })
        let reasons = try failureReasons(spool)
        XCTAssertEqual(reasons, [
            "sidecar incoming/report.pdf.meta.json: sidecar belongs to uid \(attacker), the file to uid \(victim): a sidecar is "
                + "taken only from the file's owner (or root, or the user spoold runs as); the file was not sent",
        ])
    }
}

extension ProducerTrustTests {
    /// spoold (root here) took a file hard-linked into incoming/ and uploaded it: where
    /// `fs.protected_hardlinks` is 0 (this machine has 1, so the test makes the link itself, as
    /// root, standing in for such a user), any user could so send any file on that file system.
    /// A file with more than one link is refused, said once and left alone, unless
    /// `--allow-hardlinks`.
    func testHardLinkedFile_isRefusedAndLeftAlone_unlessAllowed() throws {
        let receiver = UploadReceiver(script: .always(201))
        try receiver.start()
        defer { receiver.stop() }
        let spool = try TestSpool(self)
        let secret = spool.root + "/secret.txt"
        try write("another user's secret", to: secret)
        if geteuid() == 0 { XCTAssertEqual(chown(secret, 1235, 1235), 0) }
        XCTAssertEqual(chmod(secret, 0o600), 0)
        XCTAssertEqual(link(secret, spool.incoming + "/linked.txt"), 0)
        try spool.drop("plain.txt", Array("plain".utf8))
        let arguments = ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"]

        let refused = try SpooldProcess.run(arguments)

        XCTAssertEqual(refused.exitCode, 0, refused.stderr)
        XCTAssertEqual(receiver.requests.map(\.target), ["/up/plain.txt"])
        XCTAssertEqual(refused.stderr.occurrences(of: "incoming/linked.txt has 2 hard links"), 1, refused.stderr)
        XCTAssertEqual(spool.files(in: "incoming"), ["linked.txt"], "left alone")

        let allowed = try SpooldProcess.run(arguments + ["--allow-hardlinks"])

        XCTAssertEqual(allowed.exitCode, 0, allowed.stderr)
        XCTAssertEqual(receiver.requests.map(\.target), ["/up/plain.txt", "/up/linked.txt"])
        XCTAssertEqual(spool.files(in: "incoming"), [], "copied, its incoming name removed")
        XCTAssertEqual(try String(contentsOfFile: secret, encoding: .utf8), "another user's secret", "the other link is untouched")
    }
}
