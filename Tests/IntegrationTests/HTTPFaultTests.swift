import Foundation
import UploadReceiver
import XCTest

/// `spoold drain` against a misbehaving server: the issue "HTTP under real faults".
///
/// Every test is loopback-only, bounded in time and in requests, and waits on events (process
/// exit, the receiver's request count, a file appearing), never on a fixed sleep. Each case of
/// the transport's behaviour runs with every transport (`forEachTransport`).
final class HTTPFaultTests: TransportTestCase {
    private func startReceiver(_ script: ResponseScript = .always(201)) throws -> UploadReceiver {
        let receiver = UploadReceiver(script: script)
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        return receiver
    }

    private func drain(_ spool: TestSpool, url: String, _ extra: [String] = [], environment: [String: String] = [:],
                       timeout: Double = 60) throws -> SpooldProcess.Result {
        try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", url, "--retry-base", "0.05", "--settle", "0"]
                + transportArguments + extra,
            environment: environment, timeout: timeout)
    }

    private func onlyJSON(in spool: TestSpool, _ folder: String) throws -> [String: Any] {
        let names = spool.files(in: folder).filter { $0.hasSuffix(".json") }
        XCTAssertEqual(names.count, 1, "\(folder): \(names)")
        return try spool.json("\(folder)/\(try XCTUnwrap(names.first))")
    }

    // MARK: - Outcome classes and Retry-After

    /// Retry-After's smallest wait, one second, is twenty times --retry-base: honoured, or not.
    func testRetryAfter1_secondAttemptComesNoSoonerThanASecondAfterTheFirst() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(
                .perKey([.status(503, body: "busy", headers: [("Retry-After", "1")])], then: .status(201)))
            let spool = try TestSpool(self)
            try spool.drop("later.txt", payload(1000, seed: 1))

            let result = try drain(spool, url: receiver.baseURL + "/up/")

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            let requests = receiver.requests
            guard requests.count == 2 else { return XCTFail("\(requests.count) requests, not 2") }
            let gap = requests[1].receivedAt - requests[0].receivedAt
            XCTAssertGreaterThanOrEqual(gap, 1.0, "Retry-After: 1 is honoured (retry-base is only 0.05 s)")
            XCTAssertLessThan(gap, 4.0)
            XCTAssertEqual(requests[1].body, payload(1000, seed: 1))
        }
    }

    func testRetryAfter_isCappedByMaxBackoff() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(
                .perKey([.status(429, headers: [("Retry-After", "3600")])], then: .status(201)))
            let spool = try TestSpool(self)
            try spool.drop("capped.txt", [1, 2, 3])

            let result = try drain(spool, url: receiver.baseURL + "/up/", ["--max-backoff", "0.2"], timeout: 30)

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            let requests = receiver.requests
            guard requests.count == 2 else { return XCTFail("\(requests.count) requests, not 2") }
            XCTAssertLessThan(requests[1].receivedAt - requests[0].receivedAt, 2.0)
        }
    }

    func testClientError400_exactlyOneRequest_failedWithStatusAndExcerpt() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(.always(.status(400, body: "field 'x' is invalid\n")))
            let spool = try TestSpool(self)
            try spool.drop("bad.txt", [1, 2, 3])

            let result = try drain(spool, url: receiver.baseURL + "/up/")

            XCTAssertEqual(result.exitCode, 1)
            XCTAssertEqual(receiver.requests.count, 1)
            let json = try onlyJSON(in: spool, "failed")
            let attempts = try XCTUnwrap(json["attempts"] as? [[String: Any]])
            XCTAssertEqual(attempts.count, 1)
            XCTAssertEqual(attempts[0]["httpStatus"] as? Int, 400)
            XCTAssertEqual(attempts[0]["outcome"] as? String, "final")
            XCTAssertEqual(attempts[0]["responseExcerpt"] as? String, "field 'x' is invalid")
            XCTAssertTrue((json["failureReason"] as? String ?? "").contains("HTTP 400"), "\(json)")
            XCTAssertEqual(json["failureCode"] as? String, "server_refused")
            XCTAssertNil(attempts[0]["code"], "an answer's status says it")
        }
    }

    func testConnectionDroppedMidBody_isRetried_thenSucceeds() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(.perKey([.faulted(.closeMidBody)], then: .status(201)))
            let spool = try TestSpool(self)
            let bytes = payload(512 * 1024, seed: 3)
            try spool.drop("dropped.bin", bytes)

            let result = try drain(spool, url: receiver.baseURL + "/up/", ["--keep-done"])

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            let requests = receiver.requests
            guard requests.count == 2 else { return XCTFail("\(requests.count) requests, not 2") }
            XCTAssertFalse(requests[0].bodyComplete)
            XCTAssertEqual(requests[1].body, bytes)
            let json = try onlyJSON(in: spool, "done")
            let attempts = try XCTUnwrap(json["attempts"] as? [[String: Any]])
            XCTAssertEqual(attempts.map { $0["outcome"] as? String }, ["retryable", "success"])
        }
    }

    func testServerNeverAnswers_eachAttemptEndsAtTheDeadline_itemFailsAfterThree() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(.always(.faulted(.neverAnswer)))
            let spool = try TestSpool(self)
            try spool.drop("silent.txt", payload(100, seed: 4))
            let started = Date()

            let result = try drain(spool, url: receiver.baseURL + "/up/", ["--timeout", "0.5"], timeout: 30)

            let elapsed = Date().timeIntervalSince(started)
            XCTAssertEqual(result.exitCode, 1, result.stderr)
            XCTAssertEqual(receiver.requests.count, 3, "one request per attempt")
            XCTAssertGreaterThanOrEqual(elapsed, 1.5, "each attempt waited for its deadline")
            XCTAssertLessThan(elapsed, 12.0, "no attempt hung past its deadline")
            let json = try onlyJSON(in: spool, "failed")
            let attempts = try XCTUnwrap(json["attempts"] as? [[String: Any]])
            XCTAssertEqual(attempts.count, 3)
            for attempt in attempts {
                XCTAssertTrue((attempt["error"] as? String ?? "").contains("deadline"), "\(attempt)")
            }
        }
    }

    func testHugeAnswer_onlyItsFirstBytesAreKept_andTheDaemonStaysSmall() throws {
        try forEachTransport { _ in
            let huge = String(repeating: "x", count: 8 << 20)
            let receiver = try startReceiver(.always(.status(400, body: "tail follows " + huge)))
            let spool = try TestSpool(self)
            try spool.drop("chatty.txt", [1, 2, 3])

            let result = try drain(spool, url: receiver.baseURL + "/up/")

            XCTAssertEqual(result.exitCode, 1, result.stderr)
            let attempts = try XCTUnwrap(try onlyJSON(in: spool, "failed")["attempts"] as? [[String: Any]])
            let excerpt = try XCTUnwrap(attempts.first?["responseExcerpt"] as? String)
            XCTAssertTrue(excerpt.hasPrefix("tail follows x"), excerpt)
            XCTAssertLessThanOrEqual(excerpt.utf8.count, 512, "the excerpt is bounded, not the 8 MiB answer")
        }
    }

    // MARK: - Outage

    /// `--limit-rate` is the whole daemon's, with either transport: 2 × 48 KiB at 128 KiB/s in
    /// all take at least 0.75 s whatever the concurrency (a rate per transfer: half that), and
    /// arrive whole.
    func testLimitRate_isSharedByTheWholeDaemon() throws {
        try forEachTransport { _ in
            let receiver = UploadReceiver(script: .always(201))
            _ = try receiver.start()
            addTeardownBlock { receiver.stop() }
            let spool = try TestSpool(self)
            let bodies = (0..<2).map { payload(48 << 10, seed: UInt64(40 + $0)) }
            for (i, body) in bodies.enumerated() { try spool.drop("slow\(i).bin", body) }
            let started = Date()

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--limit-rate", "128K",
                 "--concurrency", "2"] + transportArguments, timeout: 30)

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertEqual(Set(receiver.requests.map(\.body)), Set(bodies))
            XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.65, "the rate is shared, not per transfer")
        }
    }

    /// A `--limit-rate` timetable changes the rate of an upload under way, with either
    /// transport: 64 KiB at 4 KiB/s would take 16 s; the rate is lifted two seconds in, and the
    /// upload ends soon after, not before.
    func testLimitRateTimetable_changesTheRateOfAnUploadUnderWay() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        func clock(_ date: Date) -> String {
            let parts = calendar.dateComponents([.hour, .minute, .second], from: date)
            return String(format: "%02d:%02d:%02d", parts.hour!, parts.minute!, parts.second!)
        }
        try forEachTransport { _ in
            let receiver = UploadReceiver(script: .always(201))
            _ = try receiver.start()
            addTeardownBlock { receiver.stop() }
            let spool = try TestSpool(self)
            let body = payload(64 << 10, seed: 44)
            try spool.drop("timetable.bin", body)
            let lifted = Date().addingTimeInterval(2).timeIntervalSince1970.rounded(.up)
            let timetable = "\(clock(Date().addingTimeInterval(-3600))),4K \(clock(Date(timeIntervalSince1970: lifted))),off"

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0", "--limit-rate", timetable]
                    + transportArguments, environment: ["TZ": "UTC"], timeout: 30)

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertEqual(receiver.requests.map(\.body), [body])
            let ended = Date().timeIntervalSince1970
            XCTAssertGreaterThanOrEqual(ended, lifted, "4 KiB/s until the change")
            XCTAssertLessThan(ended - lifted, 8, "no limit after it: \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("--limit-rate now 4.0 KiB/s until"), result.stderr)
            XCTAssertTrue(result.stderr.contains("--limit-rate now off (no limit)"), result.stderr)
        }
    }

    func testRefusedPortLongerThanTheRetryBudget_thenUp_nothingFails_statusShowsThePause() throws {
        try forEachTransport { _ in
            let refusing = try RefusingPort(self)
            let port = refusing.port
            let spool = try TestSpool(self)
            for i in 0..<3 { try spool.drop("o\(i).txt", payload(200 + i, seed: UInt64(10 + i))) }
            let drain = try SpooldProcess(
                ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:\(port)/up/", "--retry-base", "0.01",
                 "--max-attempts", "2", "--settle", "0", "--keep-done"] + transportArguments)
            addTeardownBlock { drain.signal(SIGKILL) }

            let marker = spool.path + "/outage"
            XCTAssertTrue(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: marker) }, drain.readErr())
            let status = try SpooldProcess.run(["status", "--spool", spool.path])
            XCTAssertTrue(status.stdout.contains("paused since"), status.stdout)
            XCTAssertTrue(status.stdout.contains("connection refused"), status.stdout)
            let statusJSON = try SpooldProcess.run(["status", "--spool", spool.path, "--json"])
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(statusJSON.stdout.utf8)) as? [String: Any])
            XCTAssertEqual((object["uploads"] as? [String: Any])?["paused"] as? Bool, true)
            // The outage lasts over a second: a hundred times the retry budget (2 attempts, 0.01 s apart).
            let markerJSON = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: marker))) as? [String: Any]
            XCTAssertNotNil(markerJSON?["since"] as? String)
            XCTAssertTrue(waitUntil(timeout: 5) { self.outageAge(spool) >= 1.2 })
            XCTAssertEqual(spool.files(in: "failed"), [], "no attempt was used up while the port refused")

            let receiver = UploadReceiver(script: .always(201))
            refusing.release()
            try receiver.start(port: port)
            addTeardownBlock { receiver.stop() }
            let result = try drain.wait(timeout: 30)

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertEqual(spool.files(in: "failed"), [])
            XCTAssertEqual(receiver.requests.count, 3)
            XCTAssertEqual(Set(receiver.requests.compactMap { $0.header("Idempotency-Key") }).count, 3)
            XCTAssertEqual(spool.files(in: "done").filter { $0.hasSuffix(".json") }.count, 3)
            XCTAssertTrue(spool.files(in: "done").allSatisfy { $0.contains(".a1.") }, "refused attempts were handed back: \(spool.files(in: "done"))")
            XCTAssertEqual(result.stderr.components(separatedBy: "endpoint unreachable").count - 1, 1, result.stderr)
            XCTAssertEqual(result.stderr.components(separatedBy: "endpoint reachable again").count - 1, 1, result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the marker goes when the outage ends")
        }
    }

    func testDrainAgainstARefusedPort_withMaxTime_exitsFive_nothingLostOrCounted() throws {
        try forEachTransport { _ in
            let port = try RefusingPort(self).port
            let spool = try TestSpool(self)
            for i in 0..<2 { try spool.drop("r\(i).txt", payload(50, seed: UInt64(i))) }
            let started = Date()

            let result = try drain(spool, url: "http://127.0.0.1:\(port)/up/", ["--max-time", "2"], timeout: 30)

            XCTAssertEqual(result.exitCode, 5, result.stderr)
            XCTAssertLessThan(Date().timeIntervalSince(started), 10, "drain is bounded")
            XCTAssertTrue(result.stderr.contains("endpoint unreachable"), result.stderr)
            XCTAssertTrue(result.stderr.contains("2 pending, 0 in flight, 0 in incoming/"), result.stderr)
            let pending = spool.files(in: "pending")
            XCTAssertEqual(pending.count, 4)
            XCTAssertTrue(pending.allSatisfy { $0.contains(".a0.") }, "no attempt was used up: \(pending)")
        }
    }

    // MARK: - Redirects

    func testRedirect307SameOrigin_isFollowedWithTheBodyIntact() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(ResponseScript { request in
                request.target.hasPrefix("/up/") ? .status(307, headers: [("Location", "/final/" + request.target.dropFirst(4))])
                    : .status(201)
            })
            let spool = try TestSpool(self)
            let bytes = payload(300_000, seed: 5)
            try spool.drop("moved.bin", bytes)

            let result = try drain(spool, url: receiver.baseURL + "/up/")

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            let requests = receiver.requests
            XCTAssertEqual(requests.map(\.target), ["/up/moved.bin", "/final/moved.bin"])
            guard requests.count == 2 else { return }
            XCTAssertEqual(requests[1].method, "PUT", "the method is kept")
            XCTAssertTrue(requests[1].body == bytes, "the body arrives intact at the redirect target")
            XCTAssertEqual(requests[1].header("Idempotency-Key"), requests[0].header("Idempotency-Key"))
            XCTAssertEqual(spool.itemFiles, [])
        }
    }

    func testRedirectToAnotherOrigin_andA302_areRefusedAsFinal_withoutARequestElsewhere() throws {
        try forEachTransport { _ in
            let other = try startReceiver()
            let receiver = try startReceiver(ResponseScript { request in
                switch request.target {
                case "/up/cross.txt": .status(307, headers: [("Location", other.baseURL + "/stolen")])
                case "/up/found.txt": .status(302, headers: [("Location", "/elsewhere")])
                default: .status(201)
                }
            })
            let spool = try TestSpool(self)
            try spool.drop("cross.txt", [1])
            try spool.drop("found.txt", [2])

            let result = try drain(spool, url: receiver.baseURL + "/up/")

            XCTAssertEqual(result.exitCode, 1)
            XCTAssertEqual(other.requests.count, 0, "nothing is sent to the other origin")
            XCTAssertEqual(receiver.requests.map(\.target).sorted(), ["/up/cross.txt", "/up/found.txt"], "one request each, no retry")
            var reasons: [String: String] = [:]
            for name in spool.files(in: "failed") where name.hasSuffix(".json") {
                let json = try spool.json("failed/" + name)
                reasons[json["originalName"] as? String ?? ""] = json["failureReason"] as? String
                XCTAssertEqual(json["failureCode"] as? String, "redirect_refused", "\(json)")
                XCTAssertEqual((json["attempts"] as? [[String: Any]])?.last?["code"] as? String, "redirect_refused", "\(json)")
            }
            XCTAssertTrue(reasons["cross.txt"]?.contains("another origin") == true, "\(reasons)")
            XCTAssertTrue(reasons["cross.txt"]?.contains("--allow-redirect-host") == true, "\(reasons)")
            XCTAssertTrue(reasons["found.txt"]?.contains("would turn PUT into GET") == true, "\(reasons)")
        }
    }

    func testRedirectToAnAllowedHost_isFollowed() throws {
        try forEachTransport { _ in
            let other = try startReceiver()
            let receiver = try startReceiver(.always(.status(308, headers: [("Location", other.baseURL + "/there")])))
            let spool = try TestSpool(self)
            try spool.drop("allowed.txt", [7, 7, 7])

            let result = try drain(spool, url: receiver.baseURL + "/up/", ["--allow-redirect-host", "127.0.0.1"])

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertEqual(other.requests.map(\.target), ["/there"])
            XCTAssertEqual(other.requests.first?.body, [7, 7, 7])
        }
    }

    func testBlobSwappedForASymlinkDuringTheAttempt_theRedirectHopResendsTheOpenedFile_theSecretNeverLeaves() throws {
        try forEachTransport { _ in
            let spool = try TestSpool(self)
            let bytes = payload(1000, seed: 8)
            let secretPath = spool.root + "/secret"
            let secret = Array(repeating: UInt8(ascii: "S"), count: 1000)
            try Data(secret).write(to: URL(fileURLWithPath: secretPath))
            let inflight = spool.path + "/inflight"
            // The first hop's head arrives while the blob is in inflight/: swap it for a symlink to
            // the secret, then redirect, so the second hop has to read the body again.
            let receiver = try startReceiver(ResponseScript { request in
                guard request.target.hasPrefix("/up/") else { return .status(201) }
                for name in (try? FileManager.default.contentsOfDirectory(atPath: inflight)) ?? [] where name.hasSuffix(".blob") {
                    unlink(inflight + "/" + name)
                    symlink(secretPath, inflight + "/" + name)
                }
                return .status(307, headers: [("Location", "/final/" + request.target.dropFirst(4))])
            })
            try spool.drop("photo.jpg", bytes)

            let result = try drain(spool, url: receiver.baseURL + "/up/")

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            let requests = receiver.requests
            XCTAssertEqual(requests.map(\.target), ["/up/photo.jpg", "/final/photo.jpg"])
            for request in requests {
                XCTAssertTrue(request.body == bytes, "each hop sends the file spoold opened and checked")
                XCTAssertNotEqual(request.body, secret, "the secret never leaves")
            }
        }
    }

    // MARK: - Multipart

    func testForm_sendsMultipartWithFieldsAndFile_smallAndSeveralMiB() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver()
            let spool = try TestSpool(self)
            let small = payload(1234, seed: 6)
            let large = payload(6 << 20, seed: 7)
            try Data(#"{"contentType":"image/jpeg","fields":{"caption":"a \"fox\"","note":"two\r\nlines"}}"#.utf8)
                .write(to: URL(fileURLWithPath: spool.incoming + "/fox.jpg.meta.json"))
            try spool.drop("fox.jpg", small)
            try spool.drop("big.dat", large)

            let result = try drain(spool, url: receiver.baseURL + "/form", ["--form", "upload", "--method", "POST"])

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertEqual(receiver.requests.count, 2)
            for request in receiver.requests {
                XCTAssertEqual(request.method, "POST")
                XCTAssertEqual(request.header("Content-Length").flatMap { Int64($0) }, request.bodyLength, "sent with its length")
                XCTAssertNil(request.header("Transfer-Encoding"), "never chunked")
                let form = try MultipartParser.parse(request)
                let file = try XCTUnwrap(form.first { $0.filename != nil })
                XCTAssertEqual(file.name, "upload")
                if file.filename == "fox.jpg" {
                    XCTAssertEqual(file.contentType, "image/jpeg")
                    XCTAssertTrue(file.body == small)
                    let fields = Dictionary(form.filter { $0.filename == nil }.map { ($0.name, String(decoding: $0.body, as: UTF8.self)) },
                                            uniquingKeysWith: { a, _ in a })
                    XCTAssertEqual(fields, ["caption": "a \"fox\"", "note": "two\r\nlines"])
                } else {
                    XCTAssertEqual(file.filename, "big.dat")
                    XCTAssertEqual(file.body.count, large.count)
                    XCTAssertTrue(file.body == large, "the several-MiB file part arrives intact")
                    XCTAssertEqual(form.count, 1)
                }
            }
            XCTAssertEqual(spool.itemFiles, [], "the assembled bodies are removed from tmp/")
        }
    }

    // MARK: - Secrets

    func testHeaderFileAndEnv_areOnTheWire_andNowhereInTheSpoolOrTheLog() throws {
        try forEachTransport { _ in
            let receiver = try startReceiver(.perKey([.status(500, body: "retry me")], then: .status(201)))
            let spool = try TestSpool(self)
            let headerFile = spool.root + "/auth.headers"
            try Data("# credentials\nAuthorization: Bearer s3cr3t-TOKEN-4711\n\n".utf8).write(to: URL(fileURLWithPath: headerFile))
            try spool.drop("secret-carrier.txt", [4, 2])

            let result = try drain(
                spool, url: receiver.baseURL + "/up/", ["--header-file", headerFile, "--header-env", "API_KEY_HEADER",
                                                        "--keep-done", "--verbose"],
                environment: ["API_KEY_HEADER": "X-Api-Key: k3y-ENV-0815"])

            XCTAssertEqual(result.exitCode, 0, result.stderr)
            XCTAssertEqual(receiver.requests.count, 2)
            for request in receiver.requests {
                XCTAssertEqual(request.header("Authorization"), "Bearer s3cr3t-TOKEN-4711")
                XCTAssertEqual(request.header("X-Api-Key"), "k3y-ENV-0815")
            }
            let secrets = ["s3cr3t-TOKEN-4711", "k3y-ENV-0815"]
            let files = FileManager.default.enumerator(atPath: spool.path)!.compactMap { $0 as? String }
            XCTAssertTrue(files.contains("index.wal"))
            XCTAssertTrue(files.contains { $0.hasPrefix("done/") && $0.hasSuffix(".json") })
            for relative in files {
                guard let data = FileManager.default.contents(atPath: spool.path + "/" + relative) else { continue }
                let text = String(decoding: data, as: UTF8.self)
                for secret in secrets { XCTAssertFalse(text.contains(secret), "\(secret) leaked into \(relative)") }
            }
            for secret in secrets {
                XCTAssertFalse(result.stderr.contains(secret), "\(secret) leaked into the log")
                XCTAssertFalse(result.stdout.contains(secret))
            }
        }
    }

    func testHeaderEnv_unsetVariable_isAUsageErrorThatDoesNotEchoValues() throws {
        let spool = try TestSpool(self)
        let headerFile = spool.root + "/bad.headers"
        try Data("Authorization Bearer no-colon-secret\n".utf8).write(to: URL(fileURLWithPath: headerFile))
        let bad = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "http://127.0.0.1:1/", "--header-file", headerFile])
        XCTAssertEqual(bad.exitCode, 2)
        XCTAssertTrue(bad.stderr.contains("line 1"), bad.stderr)
        XCTAssertFalse(bad.stderr.contains("no-colon-secret"), bad.stderr)
        let unset = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "http://127.0.0.1:1/", "--header-env", "SPOOLD_TEST_UNSET_VAR"])
        XCTAssertEqual(unset.exitCode, 2)
        XCTAssertTrue(unset.stderr.contains("SPOOLD_TEST_UNSET_VAR"), unset.stderr)
    }

    // MARK: - Per-item URL

    func testItemURL_usedOnlyUnderAnAllowedPrefix() throws {
        let receiver = try startReceiver()
        let spool = try TestSpool(self)
        let allowed = receiver.baseURL + "/cams/"
        try Data(#"{"url":"\#(allowed)7/pic.jpg"}"#.utf8).write(to: URL(fileURLWithPath: spool.incoming + "/ok.jpg.meta.json"))
        try spool.drop("ok.jpg", [1])
        try Data(#"{"url":"\#(receiver.baseURL)/admin/x"}"#.utf8).write(to: URL(fileURLWithPath: spool.incoming + "/no.jpg.meta.json"))
        try spool.drop("no.jpg", [2])
        try Data(#"{"url":"\#(allowed)../admin/y"}"#.utf8).write(to: URL(fileURLWithPath: spool.incoming + "/dots.jpg.meta.json"))
        try spool.drop("dots.jpg", [3])

        let result = try drain(spool, url: receiver.baseURL + "/up/", ["--allow-url", allowed])

        XCTAssertEqual(result.exitCode, 1)
        XCTAssertEqual(receiver.requests.map(\.target), ["/cams/7/pic.jpg"])
        let failed = try spool.files(in: "failed").filter { $0.hasSuffix(".json") }.map { try spool.json("failed/" + $0) }
        XCTAssertEqual(failed.count, 2)
        for json in failed {
            XCTAssertTrue((json["failureReason"] as? String ?? "").contains("its url"), "\(json)")
            XCTAssertNotNil(json["url"] as? String, "the url is kept in the item's json")
        }
    }

    // MARK: - Helpers

    // MARK: - Stopping

    func testMaxTime_cancelsTheUploadTheServerNeverAnswers_andHandsItsAttemptBack() throws {
        try forEachTransport { _ in
            let receiver = UploadReceiver(script: .always(.faulted(.neverAnswer)))
            _ = try receiver.start()
            addTeardownBlock { receiver.stop() }
            let spool = try TestSpool(self)
            try spool.drop("stuck.bin", payload(1000, seed: 8))
            let started = Date()

            let result = try SpooldProcess.run(
                ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0",
                 "--max-time", "2", "--timeout", "60"] + transportArguments, timeout: 30)

            XCTAssertEqual(result.exitCode, 5, result.stderr)
            XCTAssertLessThan(Date().timeIntervalSince(started), 15.0, "cancelAll ends the transfer the server never answers")
            XCTAssertTrue(result.stderr.contains("--max-time grace over: cancelling 1 upload(s)"), result.stderr)
            let pending = spool.files(in: "pending")
            XCTAssertEqual(pending.count, 2)
            XCTAssertTrue(pending.allSatisfy { $0.contains(".a0.") }, "the cancelled attempt did not count: \(pending)")
        }
    }

    func testCurlOnlyOptions_withURLSession_areUsageErrors() throws {
        let spool = try TestSpool(self)
        for option in [["--cacert", "/etc/hostname"], ["--capath", "/etc"]] {
            let result = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "http://127.0.0.1:1/"] + option)
            XCTAssertEqual(result.exitCode, 2, result.stderr)
            XCTAssertTrue(result.stderr.contains("needs --transport curl"), result.stderr)
        }
        let unknown = try SpooldProcess.run(["drain", "--spool", spool.path, "--url", "http://127.0.0.1:1/", "--transport", "wget"])
        XCTAssertEqual(unknown.exitCode, 2)
        XCTAssertTrue(unknown.stderr.contains("curl or urlsession"), unknown.stderr)
    }

    private func outageAge(_ spool: TestSpool) -> Double {
        guard let data = FileManager.default.contents(atPath: spool.path + "/outage"),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let since = object["since"] as? String,
              let date = ISO8601DateFormatter.withFractions.date(from: since)
        else { return 0 }
        return Date().timeIntervalSince(date)
    }
}

extension ISO8601DateFormatter {
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}

/// A small `multipart/form-data` parser (RFC 7578), enough to check what spoold sent.
enum MultipartParser {
    struct Part {
        var name: String
        var filename: String?
        var contentType: String?
        var body: [UInt8]
    }

    struct ParseError: Error { var message: String }

    static func parse(_ request: ReceivedRequest) throws -> [Part] {
        guard let type = request.header("Content-Type"), type.hasPrefix("multipart/form-data"),
              let range = type.range(of: "boundary=")
        else { throw ParseError(message: "not multipart: \(request.header("Content-Type") ?? "-")") }
        let boundary = Array("--\(type[range.upperBound...])".utf8)
        let body = request.body
        var positions: [Int] = []
        var i = 0
        while let found = find(boundary, in: body, from: i) {
            positions.append(found)
            i = found + boundary.count
        }
        guard positions.count >= 2, positions[0] == 0 else { throw ParseError(message: "no boundaries") }
        guard Array(body[(positions.last! + boundary.count)...]) == Array("--\r\n".utf8) else {
            throw ParseError(message: "bad epilogue")
        }
        var parts: [Part] = []
        for (start, end) in zip(positions, positions.dropFirst()) {
            let partStart = start + boundary.count + 2  // CRLF after the boundary
            let partEnd = end - 2  // CRLF before the next boundary
            guard let headEnd = find(Array("\r\n\r\n".utf8), in: body, from: partStart), headEnd <= partEnd else {
                throw ParseError(message: "part without a head")
            }
            let head = String(decoding: body[partStart..<headEnd], as: UTF8.self)
            var part = Part(name: "", body: Array(body[(headEnd + 4)..<partEnd]))
            for line in head.components(separatedBy: "\r\n") {
                if line.lowercased().hasPrefix("content-disposition:") {
                    part.name = unquote(parameter("name", in: line) ?? "")
                    part.filename = parameter("filename", in: line).map(unquote)
                } else if line.lowercased().hasPrefix("content-type:") {
                    part.contentType = line.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces)
                }
            }
            parts.append(part)
        }
        return parts
    }

    private static func parameter(_ name: String, in line: String) -> String? {
        guard let range = line.range(of: "; \(name)=\"") else { return nil }
        let rest = line[range.upperBound...]
        guard let close = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<close])
    }

    /// Undoes the percent-encoding of `"`, CR and LF in quoted names (RFC 7578 §4.2).
    private static func unquote(_ s: String) -> String {
        s.replacingOccurrences(of: "%22", with: "\"").replacingOccurrences(of: "%0D", with: "\r")
            .replacingOccurrences(of: "%0A", with: "\n")
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var i = from
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }
}
