import Foundation
import UploadReceiver
import XCTest

/// Where secrets must never appear (docs/guarantees.md "Security model"): an item's json, `spoold show`, the
/// log, a core dump.
final class SecretExposureTests: XCTestCase {
    /// An answer that echoes the request put the `--header-file` Authorization into the failed
    /// item's `responseExcerpt`, which `spoold show` prints: configured secrets and credential
    /// header values (the operator's and the item's own) are redacted before anything is stored,
    /// also a secret's token alone and a secret cut short at the excerpt's end.
    func testAnswerEchoingTheRequest_storesNoSecret() throws {
        let receiver = UploadReceiver(script: ResponseScript { request in
            let authorization = request.header("Authorization") ?? ""
            let token = authorization.split(separator: " ").last.map(String.init) ?? ""
            let key = request.header("X-Api-Key") ?? ""
            if request.target.hasSuffix("cut.txt") {
                // The excerpt (512 bytes) ends 6 characters into the secret.
                let text = String(repeating: "x", count: 512 - 13) + authorization
                return ScriptedResponse(status: 400, body: Array(text.utf8))
            }
            return ScriptedResponse(status: 400, body: Array("denied: authorization=\(authorization) token=\(token) key=\(key)".utf8))
        })
        try receiver.start()
        defer { receiver.stop() }
        let spool = try TestSpool(self)
        let headerFile = spool.root + "/secret-headers"
        try Data("Authorization: Bearer file-secret-123\n".utf8).write(to: URL(fileURLWithPath: headerFile))
        try Data(#"{"headers":{"X-Api-Key":"item-key-4567"}}"#.utf8).write(to: URL(fileURLWithPath: spool.incoming + "/echo.txt.meta.json"))
        try spool.drop("echo.txt", Array("a".utf8))
        try spool.drop("cut.txt", Array("b".utf8))

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--header-file", headerFile])

        XCTAssertEqual(result.exitCode, 1, result.stderr)
        XCTAssertEqual(receiver.requests.first?.header("Authorization"), "Bearer file-secret-123", "sent as configured")
        var shown = ""
        var excerpts: [String] = []
        for json in spool.files(in: "failed") where json.hasSuffix(".json") {
            // The item's own headers are kept in its json (they are needed for its upload); the
            // operator's secret never is.
            let text = try String(contentsOfFile: spool.path + "/failed/" + json, encoding: .utf8)
            XCTAssertFalse(text.contains("file-secret") || text.contains("file-s"), text)
            let attempts = try XCTUnwrap(spool.json("failed/" + json)["attempts"] as? [[String: Any]])
            excerpts += attempts.compactMap { $0["responseExcerpt"] as? String }
            let id = String(json.prefix { $0 != "." })
            shown += try SpooldProcess.run(["show", "--spool", spool.path, id]).stdout
        }
        XCTAssertEqual(excerpts.sorted(), [
            "denied: authorization=REDACTED token=REDACTED key=REDACTED", String(repeating: "x", count: 512 - 13) + "REDACTED",
        ])
        XCTAssertTrue(shown.contains("response: denied: authorization=REDACTED token=REDACTED key=REDACTED"), shown)
        XCTAssertFalse(shown.contains("file-secret"), shown)
        XCTAssertFalse(result.stderr.contains("file-secret") || result.stderr.contains("item-key"), result.stderr)
    }

    /// A SIGQUIT core held the `--header-file` value. A daemon holding secrets makes itself not
    /// dumpable once it has read them (no core; its /proc/PID/ then belongs to root, so another
    /// process of the same user cannot read its environment or memory), again after a recycle
    /// (an exec makes the new image dumpable). Seen from outside: run as uid 1235, its
    /// /proc/PID/environ is owned by root, and by 1235 for a daemon without secrets.
    func testDaemonHoldingSecrets_isNotDumpable_alsoAfterARecycle() throws {
        let uid = 1235
        try OtherUser.require(uid)
        let receiver = UploadReceiver(script: .always(201))
        try receiver.start()
        defer { receiver.stop() }
        let spool = try TestSpool(self)
        let headerFile = spool.root + "/secret-headers"
        try Data("Authorization: Bearer file-secret-123\n".utf8).write(to: URL(fileURLWithPath: headerFile))
        for path in [spool.root, spool.path, spool.incoming, headerFile] { XCTAssertEqual(chown(path, uid_t(uid), gid_t(uid)), 0) }
        let wrapper = [OtherUser.setpriv, "--reuid", String(uid), "--regid", String(uid), "--clear-groups"]
        func environOwner(_ daemon: SpooldProcess) -> uid_t? {
            var st = stat()
            return stat("/proc/\(daemon.process.processIdentifier)/environ", &st) == 0 ? st.st_uid : nil
        }

        for (secrets, owner) in [([String](), uid_t(uid)), (["--header-file", headerFile, "--recycle-after", "1"], 0)] {
            let daemon = try SpooldProcess(
                ["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"] + secrets, wrapper: wrapper)
            addTeardownBlock { daemon.signal(SIGKILL) }
            XCTAssertTrue(waitUntil(timeout: 20) { daemon.readErr().contains("running spool") }, daemon.readErr())
            XCTAssertEqual(environOwner(daemon), owner, "\(secrets): \(daemon.readErr())")
            if !secrets.isEmpty {
                try spool.drop("a.txt", [1])
                XCTAssertTrue(waitUntil(timeout: 20) { daemon.readErr().contains("running again after recycle 1") }, daemon.readErr())
                XCTAssertEqual(environOwner(daemon), 0, "the recycled image: \(daemon.readErr())")
            }
            daemon.signal(SIGTERM)
            XCTAssertEqual(try daemon.wait(timeout: 30).exitCode, 0)
        }
    }
}
