import Foundation
import UploadReceiver
import XCTest

/// `--metrics-file`: the Prometheus textfile, parsed and checked against what happened.
final class MetricsTests: XCTestCase {
    func testDrain_metricsFileCountsUploadsBytesDurationsAndTheFailedItem() throws {
        let receiver = UploadReceiver(script: ResponseScript { $0.target.hasSuffix("bad.txt") ? .status(400) : .status(201) })
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        let sizes = [100, 2000, 30_000]
        for (i, size) in sizes.enumerated() { try spool.drop("ok\(i).bin", payload(size, seed: UInt64(i))) }
        try spool.drop("bad.txt", payload(77, seed: 9))
        let path = spool.root + "/spoold.prom"

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--metrics-file", path])

        XCTAssertEqual(result.exitCode, 1, result.stderr)
        let m = try PromFile(path)
        XCTAssertEqual(m["spoold_uploads_total{outcome=\"success\"}"], 3)
        XCTAssertEqual(m["spoold_uploads_total{outcome=\"final\"}"], 1)
        XCTAssertEqual(m["spoold_uploads_total{outcome=\"retryable\"}"], 0)
        XCTAssertEqual(m["spoold_uploads_total{outcome=\"outage\"}"], 0)
        XCTAssertEqual(m["spoold_uploaded_bytes_total"], Double(sizes.reduce(0, +)))
        XCTAssertEqual(m["spoold_upload_duration_seconds_count"], 4)
        XCTAssertEqual(m["spoold_upload_duration_seconds_bucket{le=\"+Inf\"}"], 4)
        XCTAssertEqual(m["spoold_queue_items{state=\"failed\"}"], 1)
        XCTAssertEqual(m["spoold_queue_bytes{state=\"failed\"}"], 77)
        XCTAssertEqual(m["spoold_queue_items{state=\"pending\"}"], 0)
        XCTAssertEqual(m["spoold_queue_items{state=\"inflight\"}"], 0)
        XCTAssertEqual(m["spoold_queue_items{state=\"incoming\"}"], 0)
        XCTAssertEqual(m["spoold_oldest_pending_age_seconds"], 0)
        XCTAssertEqual(m["spoold_endpoint_up"], 1)
        XCTAssertEqual(m["spoold_dropped_total"], 0)
        let buckets = m.samples.filter { $0.key.hasPrefix("spoold_upload_duration_seconds_bucket") }
        XCTAssertEqual(buckets.count, 14, "13 bounds and +Inf")
        XCTAssertEqual(m.types["spoold_upload_duration_seconds"], "histogram")
        XCTAssertEqual(m.types["spoold_uploads_total"], "counter")
        XCTAssertEqual(m.types["spoold_queue_items"], "gauge")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: spool.root).filter { $0.contains(".tmp-") }, [],
                       "the scratch file was renamed into place")
    }

    /// Written at start and again at exit, after an outage (the refresh every 10 s between is
    /// `MetricsRefreshTests`', under the manual clock).
    func testRun_metricsWrittenAtStart_andAtExitAfterAnOutage() throws {
        let port = try RefusingPort(self).port
        let spool = try TestSpool(self)
        try spool.drop("a.bin", payload(1000, seed: 1))
        try spool.drop("b.bin", payload(234, seed: 2))
        let path = spool.root + "/spoold.prom"
        let run = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", "http://127.0.0.1:\(port)/up/", "--settle", "0", "--metrics-file", path])
        addTeardownBlock { run.signal(SIGKILL) }

        XCTAssertTrue(waitUntil(timeout: 15) { (try? PromFile(path))?["spoold_endpoint_up"] != nil }, run.readErr())
        // The outage is in the log once the first attempts were refused.
        XCTAssertTrue(waitUntil(timeout: 15) { run.readErr().contains("endpoint unreachable") }, run.readErr())
        try FileManager.default.removeItem(atPath: path)
        run.signal(SIGTERM)
        let result = try run.wait(timeout: 20)

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        let m = try PromFile(path)
        XCTAssertEqual(m["spoold_endpoint_up"], 0, "written again at exit, during the outage")
        XCTAssertEqual(m["spoold_queue_items{state=\"pending\"}"], 2)
        XCTAssertEqual(m["spoold_queue_bytes{state=\"pending\"}"], 1234)
        XCTAssertEqual(m["spoold_queue_items{state=\"inflight\"}"], 0)
        XCTAssertGreaterThan(m["spoold_uploads_total{outcome=\"outage\"}"] ?? 0, 0)
        XCTAssertEqual(m["spoold_uploads_total{outcome=\"success\"}"], 0)
        XCTAssertGreaterThanOrEqual(m["spoold_oldest_pending_age_seconds"] ?? -1, 0)
    }

    /// `--metrics-file` wrote `PATH.tmp-<pid>` without O_EXCL: another user who can write the
    /// folder (a shared textfile collector's) planted that file and then owned the published
    /// metrics file. The scratch file is now made with O_CREAT|O_EXCL|O_NOFOLLOW under a name no
    /// one can guess: what was planted under the old names is never opened.
    func testScratchFilesPlantedByAnotherUser_areNeverPublished() throws {
        let attacker = 1234
        try OtherUser.require(attacker)
        let spool = try TestSpool(self)
        let folder = spool.root + "/collector"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(folder, 0o1777), 0)
        let path = folder + "/spoold.prom"
        let run = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", "http://127.0.0.1:9/up/", "--metrics-file", path])
        addTeardownBlock { run.signal(SIGKILL) }
        XCTAssertTrue(waitUntil(timeout: 15) { FileManager.default.fileExists(atPath: path) }, run.readErr())
        // The attacker plants the scratch name of this daemon (a file they own, writable by all)
        // and a symlink under the pid of the next one.
        let pid = run.process.processIdentifier
        XCTAssertEqual(try OtherUser.run(
            attacker, #"umask 0; printf planted > "$1.tmp-$2" && ln -s /etc/hostname "$1.tmp-$(($2 + 1))""#,
            arguments: [path, String(pid)]), 0)
        run.signal(SIGTERM)  // the metrics are written once more at exit
        XCTAssertEqual(try run.wait(timeout: 20).exitCode, 0)

        var st = stat()
        XCTAssertEqual(lstat(path, &st), 0)
        XCTAssertEqual(st.st_uid, geteuid(), "the published file is the daemon's")
        XCTAssertNotNil(try PromFile(path)["spoold_endpoint_up"])
        XCTAssertEqual(try String(contentsOfFile: "\(path).tmp-\(pid)", encoding: .utf8), "planted", "left as it was")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp-\(pid)-") }, [])
    }
}

/// A Prometheus text file read back: samples by `name{labels}` and the declared types.
struct PromFile {
    var samples: [String: Double] = [:]
    var types: [String: String] = [:]

    init(_ path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                types[String(parts[2])] = String(parts[3])
            } else if !line.hasPrefix("#") {
                let space = try XCTUnwrap(line.lastIndex(of: " "))
                let value = String(line[line.index(after: space)...])
                samples[String(line[..<space])] = value == "+Inf" ? .infinity : try XCTUnwrap(Double(value), String(line))
            }
        }
    }

    subscript(_ key: String) -> Double? { samples[key] }
}
