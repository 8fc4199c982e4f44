import Foundation
import UploadReceiver
import XCTest

/// CPU time a process has used, user and system, from `/proc/PID/stat` (fields 14 and 15, in
/// clock ticks): what `top` shows, whatever the machine's load.
enum ProcessCPU {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// Seconds of CPU used so far by `pid` (all its threads), or nil once it is gone.
    static func seconds(of pid: pid_t) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")")  // the command name may hold spaces and parentheses
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12 here.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }
}

/// A state in which spoold can make no progress, and how to bring a daemon into it. "Blocked is
/// idle": a daemon in any of them must sleep until an event or a deadline (docs/guarantees.md "Security
/// model": no producer can make it spin). Add a case here for each new way of being blocked;
/// `BlockedIsIdleTests` measures every one.
struct BlockedState: Sendable {
    var name: String
    /// Answers every upload, or nil: nothing listens on the port (connection refused).
    var answer: ResponseScript?
    /// Files dropped into incoming/ before the daemon starts.
    var files = 5
    /// Options for `spoold run` besides the spool and the URL.
    var arguments: [String] = []
    /// Environment variables for the daemon besides the test's own.
    var environment: [String: String] = [:]
    /// Whether the daemon is in the state: the spool and what it logged so far.
    var reached: @Sendable (TestSpool, String) -> Bool

    /// The endpoint answers 503 and every item waits out a 30 s backoff.
    static let waitingForRetry = BlockedState(
        name: "every item waiting for its retry time", answer: .always(503), arguments: ["--retry-base", "30"],
        reached: { spool, log in spool.files(in: "incoming").isEmpty && log.occurrences(of: "next try in") == 5 })

    /// Nothing listens: uploads are paused and probed.
    static let outage = BlockedState(
        name: "outage", answer: nil,
        reached: { spool, _ in
            spool.files(in: "incoming").isEmpty && FileManager.default.fileExists(atPath: spool.path + "/outage")
        })

    /// `--max-items` reached while items wait for their retry, files waiting in incoming/.
    static let spoolFull = BlockedState(
        name: "spool full (items waiting for their retry)", answer: .always(503),
        arguments: ["--retry-base", "30", "--max-items", "3"],
        reached: { spool, log in
            FileManager.default.fileExists(atPath: spool.path + "/size-limit") && log.occurrences(of: "next try in") == 3
                && spool.files(in: "incoming").count == 2
        })

    /// `--max-spool-size` reached during an outage, files waiting in incoming/: three 4 KiB blocks,
    /// so three files sent directly (a block each, no json yet) join, and the others wait.
    static let spoolFullDuringOutage = BlockedState(
        name: "spool full during an outage", answer: nil, arguments: ["--max-spool-size", "12K"],
        reached: { spool, _ in
            FileManager.default.fileExists(atPath: spool.path + "/size-limit")
                && FileManager.default.fileExists(atPath: spool.path + "/outage") && spool.files(in: "incoming").count == 2
        })

    /// The endpoint throttles with a `Retry-After` (capped at 60 s by --max-backoff): every request
    /// waits for its end.
    static let throttledPaused = BlockedState(
        name: "throttled, every request paused by Retry-After",
        answer: .always(.status(429, headers: [("Retry-After", "3600")])), arguments: ["--max-backoff", "60"],
        reached: { spool, _ in spool.files(in: "incoming").isEmpty && throttleMarker(spool)?["pausedUntil"] != nil })

    /// The endpoint throttles every request: each answer cuts the daemon's rate (down to 0.5 a
    /// second), and it sleeps until each next token is due. Measured from 1 a second or fewer: at
    /// 3 a second the few requests of the measurement took 0.10-0.11 s of CPU on a loaded machine,
    /// the whole allowance, when a spinning daemon takes a core.
    static let throttledLow = BlockedState(
        name: "throttled down to 1 request a second or fewer", answer: .always(429), files: 1,
        reached: { spool, _ in
            spool.files(in: "incoming").isEmpty && ((throttleMarker(spool)?["ratePerSecond"] as? Double) ?? 100) <= 1
        })

    /// Outside its `--upload-window` (one that opens six hours from now, UTC): every file taken
    /// in, nothing sent, the daemon asleep until the window opens.
    static let outsideUploadWindow = BlockedState(
        name: "outside the upload window", answer: .always(201),
        arguments: ["--upload-window", "\(utcClock(in: 6 * 3600))-\(utcClock(in: 7 * 3600))"], environment: ["TZ": "UTC"],
        reached: { spool, _ in
            spool.files(in: "incoming").isEmpty && spool.files(in: "pending").count == 10
                && FileManager.default.fileExists(atPath: spool.path + "/window-closed")
        })

    /// `HH:MM:SS` in UTC, `seconds` from now.
    static func utcClock(in seconds: Double) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let parts = calendar.dateComponents([.hour, .minute, .second], from: Date().addingTimeInterval(seconds))
        return String(format: "%02d:%02d:%02d", parts.hour!, parts.minute!, parts.second!)
    }

    /// `SPOOL/throttled`, while there is one.
    private static func throttleMarker(_ spool: TestSpool) -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: spool.path + "/throttled") else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }
}

/// A daemon brought into a `BlockedState`.
struct BlockedDaemon {
    var state: BlockedState
    var spool: TestSpool
    var process: SpooldProcess

    /// Starts `spoold run` on a fresh spool with `state`'s files, endpoint and options.
    static func start(_ state: BlockedState, in test: XCTestCase) throws -> BlockedDaemon {
        let spool = try TestSpool(test)
        for i in 0..<state.files { try spool.drop("f\(i).bin", payload(100, seed: UInt64(i))) }
        let port: UInt16
        if let answer = state.answer {
            let receiver = UploadReceiver(script: answer)
            port = try receiver.start()
            test.addTeardownBlock { receiver.stop() }
        } else {
            port = try RefusingPort(test).port  // held: nothing else gets it while the daemon is measured
        }
        let process = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", "http://127.0.0.1:\(port)/up/", "--settle", "0"] + state.arguments,
            environment: state.environment)
        test.addTeardownBlock { process.signal(SIGKILL) }
        return BlockedDaemon(state: state, spool: spool, process: process)
    }

    var isInState: Bool { state.reached(spool, process.readErr()) }
}

extension XCTestCase {
    /// Brings one daemon into each of `states` (all at once), then measures the CPU time each
    /// uses over the same `seconds`: each must stay under `limit` seconds (5 % of a core by
    /// default; a daemon that spins gets a large share of a core even on a loaded machine).
    func assertIdle(
        in states: [BlockedState], for seconds: Double = 2, limit: Double? = nil, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let daemons = try states.map { try BlockedDaemon.start($0, in: self) }
        for daemon in daemons {
            XCTAssertTrue(waitUntil(timeout: 30) { daemon.isInState }, "never reached '\(daemon.state.name)': \(daemon.process.readErr())",
                          file: file, line: line)
        }
        usleep(300_000)  // what reaching the state took (its log lines, a last rename) is over
        let pids = daemons.map { $0.process.process.processIdentifier }
        let before = pids.map { ProcessCPU.seconds(of: $0) }
        usleep(useconds_t(seconds * 1_000_000))
        let after = pids.map { ProcessCPU.seconds(of: $0) }
        let allowed = limit ?? seconds * 0.05
        for (n, daemon) in daemons.enumerated() {
            guard let start = before[n], let end = after[n] else {
                XCTFail("'\(daemon.state.name)': the daemon exited: \(daemon.process.readErr())", file: file, line: line)
                continue
            }
            print("idle check: '\(daemon.state.name)': \(end - start) s of CPU in \(seconds) s")
            XCTAssertTrue(daemon.isInState, "'\(daemon.state.name)' did not last the measurement", file: file, line: line)
            XCTAssertLessThan(end - start, allowed,
                              "'\(daemon.state.name)': \(end - start) s of CPU in \(seconds) s while blocked", file: file, line: line)
        }
    }
}

extension String {
    /// How many times `text` occurs.
    func occurrences(of text: String) -> Int { components(separatedBy: text).count - 1 }
}
