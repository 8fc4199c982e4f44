import Foundation
import UploadReceiver
import XCTest

/// A server's answer whose header section is larger than libcurl reads (both transports use
/// libcurl): one 1 MB line failed the attempt with a misleading "Out of memory", 1 MB in 20
/// lines with "connection lost mid-request" (curl). The attempt now says what happened, and the
/// daemon neither dies nor grows.
final class AnswerHeadTests: TransportTestCase {
    private static func residentKiB(_ pid: pid_t) -> Int? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
    }

    func testHugeAnswerHead_failsTheAttemptHonestly_nothingDiesOrGrows() throws {
        try forEachTransport { transport in
            let oneLine = ScriptedResponse(status: 500, headers: [("X-Big", String(repeating: "a", count: 1_000_000))])
            let manyLines = ScriptedResponse(
                status: 500, headers: (0..<20).map { ("X-Big-\($0)", String(repeating: "b", count: 50_000)) })
            let receiver = UploadReceiver(script: ResponseScript { $0.target.contains("many") ? manyLines : oneLine },
                                          keepBodiesInMemory: false)
            try receiver.start()
            defer { receiver.stop() }
            let spool = try TestSpool(self)
            let daemon = try SpooldProcess(
                ["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--max-attempts", "1"] + transport.arguments)
            addTeardownBlock { daemon.signal(SIGKILL) }
            func parked() -> Int { spool.files(in: "failed").filter { $0.hasSuffix(".json") }.count }

            try spool.drop("one.txt", [1])
            try spool.drop("many.txt", [2])
            XCTAssertTrue(waitUntil(timeout: 30) { parked() == 2 }, "\(transport): \(daemon.readErr())")
            let early = Self.residentKiB(daemon.process.processIdentifier)
            for i in 0..<20 { try spool.drop("more-\(i).txt", [3]) }
            XCTAssertTrue(waitUntil(timeout: 60) { parked() == 22 }, "\(transport): \(daemon.readErr())")
            let late = Self.residentKiB(daemon.process.processIdentifier)

            for json in spool.files(in: "failed") where json.hasSuffix(".json") {
                let reason = try spool.json("failed/" + json)["failureReason"] as? String ?? ""
                XCTAssertTrue(reason.hasPrefix("the answer's header section is larger than libcurl reads"), "\(transport): \(reason)")
            }
            if let early, let late {
                XCTAssertLessThan(late - early, 8 * 1024, "\(transport): resident \(early) KiB after 2 such answers, \(late) KiB after 22")
            }
            daemon.signal(SIGTERM)
            XCTAssertEqual(try daemon.wait(timeout: 30).exitCode, 0, "\(transport): it lived on")
        }
    }
}
