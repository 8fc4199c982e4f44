import SpoolCore
import XCTest

/// Every transition of `TusUpload`, the tus protocol both transports drive: outcomes in, actions out.
final class TusUploadTests: XCTestCase {
    private let endpoint = "http://tus.example:1080/files/"
    private let url = "http://tus.example:1080/files/abc"

    private func settings(length: Int64 = 100, chunk: Int64 = 40, allowed: Set<String> = []) -> TusUpload.Settings {
        TusUpload.Settings(endpoint: endpoint, length: length, chunkSize: chunk, allowedHosts: allowed)
    }

    private func offers(_ extensions: String, checksums: String? = nil, maxSize: String? = nil, version: String? = "1.0.0") -> TusCapabilities {
        var headers = TusHeaders([.extensions: extensions])
        headers[.version] = version
        headers[.checksumAlgorithms] = checksums
        headers[.maximumSize] = maxSize
        return TusCapabilities(answer: headers)
    }

    private func answer(_ status: Int, location: String? = nil, _ tus: [TusHeaders.Field: String] = [:]) -> UploadOutcome {
        var answer = HTTPAnswer(status: status)
        answer.location = location
        answer.tus = TusHeaders(tus.merging([.resumable: "1.0.0"]) { $1 })
        return .answered(answer)
    }

    private func record(size: Int64 = 100, url: String? = nil, endpoint: String? = nil) -> TusUploadRecord {
        TusUploadRecord(size: size, uploadURL: url ?? self.url, endpoint: endpoint ?? self.endpoint)
    }

    private func failure(_ action: TusUpload.Action, file: StaticString = #filePath, line: UInt = #line) -> UploadOutcome? {
        guard case .fail(let outcome) = action else {
            XCTFail("expected the attempt to fail: \(action)", file: file, line: line)
            return nil
        }
        return outcome
    }

    // MARK: OPTIONS

    func testStart_withoutCapabilities_asksOptionsFirst_thenCreates() {
        var upload = TusUpload(settings(), capabilities: nil, recorded: nil)
        XCTAssertEqual(upload.start(), .options)
        var options = HTTPAnswer(status: 204)
        options.tus = TusHeaders([.version: "1.0.0", .extensions: "creation,termination"])
        XCTAssertEqual(upload.answered(.answered(options)), .create(bodyLength: 0, checksum: nil))
        XCTAssertEqual(upload.capabilities?.extensions, ["creation", "termination"])
    }

    func testOptions_answered4xx_assumesCreationOnly() {
        var upload = TusUpload(settings(), capabilities: nil, recorded: nil)
        _ = upload.start()
        XCTAssertEqual(upload.answered(.status(405)), .create(bodyLength: 0, checksum: nil))
        XCTAssertEqual(upload.capabilities, .assumed)
    }

    /// A refusal of the credentials says nothing of what the server offers: it is the outcome,
    /// and nothing is assumed.
    func testOptions_answeredWithACredentialRefusal_endsTheAttemptWithIt() {
        for status in [401, 403, 407, 429, 408] {
            var upload = TusUpload(settings(), capabilities: nil, recorded: nil)
            _ = upload.start()
            XCTAssertEqual(failure(upload.answered(.status(status))), .status(status), "\(status)")
            XCTAssertNil(upload.capabilities, "\(status)")
        }
    }

    func testOptions_without5xxOrAnswer_endsTheAttemptWithIt() {
        for outcome in [UploadOutcome.status(503), .failed(.unidentified("refused", beforeSending: true)), .cancelled] {
            var upload = TusUpload(settings(), capabilities: nil, recorded: nil)
            _ = upload.start()
            XCTAssertEqual(failure(upload.answered(outcome)), outcome)
            XCTAssertNil(upload.capabilities)
        }
    }

    func testOptions_anotherVersion_isAConfigurationProblem() {
        var upload = TusUpload(settings(), capabilities: offers("creation", version: "0.2.2"), recorded: nil)
        let outcome = failure(upload.start())
        XCTAssertEqual(outcome?.class, .configuration)
        XCTAssertTrue(outcome?.summary.contains("speaks version 0.2.2, not 1.0.0") == true, outcome?.summary ?? "")
    }

    func testOptions_withoutCreation_isAConfigurationProblem() {
        var upload = TusUpload(settings(), capabilities: offers("termination"), recorded: nil)
        let outcome = failure(upload.start())
        XCTAssertEqual(outcome?.class, .configuration)
        XCTAssertTrue(outcome?.summary.contains("does not offer the creation extension") == true, outcome?.summary ?? "")
    }

    func testOptions_maxSizeBelowTheItem_refusesIt() {
        var upload = TusUpload(settings(length: 100), capabilities: offers("creation", maxSize: "99"), recorded: nil)
        let outcome = failure(upload.start())
        XCTAssertEqual(outcome?.class, .final)
        XCTAssertEqual(outcome?.code, "server_refused")
    }

    // MARK: Creation

    func testCreate_withUpload_sendsTheFirstChunk_withItsChecksum() {
        var upload = TusUpload(settings(), capabilities: offers("creation,creation-with-upload,checksum", checksums: "md5,sha1"), recorded: nil)
        XCTAssertEqual(upload.start(), .create(bodyLength: 40, checksum: .sha1))
        var prefers = TusUpload(settings(length: 10), capabilities: offers("creation-with-upload,creation,checksum", checksums: "sha1,sha256"), recorded: nil)
        XCTAssertEqual(prefers.start(), .create(bodyLength: 10, checksum: .sha256), "the whole item when it is under a chunk; sha256 first")
    }

    func testCreated_recordsTheResolvedUploadURL_thenPatchesFromZero() {
        var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: nil)
        _ = upload.start()
        XCTAssertEqual(upload.answered(answer(201, location: "/files/abc")), .recordUploadURL(record()))
        XCTAssertEqual(upload.recorded(), .patch(url: url, offset: 0, length: 40, checksum: nil))
    }

    func testCreatedWithUpload_goesOnFromWhatTheServerTook() {
        var upload = TusUpload(settings(), capabilities: offers("creation,creation-with-upload"), recorded: nil)
        _ = upload.start()
        XCTAssertEqual(upload.answered(answer(201, location: url, [.uploadOffset: "25"])), .recordUploadURL(record()))
        XCTAssertEqual(upload.recorded(), .patch(url: url, offset: 25, length: 40, checksum: nil))
    }

    func testCreatedWithTheWholeItem_isDone_withNothingRecorded() {
        var upload = TusUpload(settings(length: 10), capabilities: offers("creation,creation-with-upload"), recorded: nil)
        _ = upload.start()
        guard case .done = upload.answered(answer(201, location: url, [.uploadOffset: "10"])) else { return XCTFail() }
    }

    func testCreatedEmptyItem_isDone() {
        var upload = TusUpload(settings(length: 0), capabilities: offers("creation"), recorded: nil)
        XCTAssertEqual(upload.start(), .create(bodyLength: 0, checksum: nil))
        guard case .done = upload.answered(answer(201)) else { return XCTFail() }
    }

    func testCreated_withoutAUsableLocationOrOffset_isRetryable() {
        let bad: [(UploadOutcome, String)] = [
            (answer(201), "without a Location"),
            (answer(201, location: "ftp://tus.example/x"), "not an http(s) URL"),
            (answer(201, location: url, [.uploadOffset: "41"]), "Upload-Offset '41' for 40 B sent"),
            (answer(201, location: url, [.uploadOffset: "-1"]), "Upload-Offset '-1'"),
        ]
        for (outcome, why) in bad {
            var upload = TusUpload(settings(), capabilities: offers("creation,creation-with-upload"), recorded: nil)
            _ = upload.start()
            let failed = failure(upload.answered(outcome))
            XCTAssertEqual(failed?.class, .retryable, why)
            XCTAssertTrue(failed?.summary.contains(why) == true, "\(why): \(failed?.summary ?? "")")
        }
    }

    func testCreated_anUploadURLOnAnotherOrigin_isRefused_unlessItsHostIsAllowed() {
        for location in ["http://elsewhere.example:1080/files/abc", "http://tus.example:1081/files/abc", "https://tus.example:1080/x"] {
            var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: nil)
            _ = upload.start()
            let failed = failure(upload.answered(answer(201, location: location)))
            XCTAssertEqual(failed?.class, .final, location)
            XCTAssertEqual(failed?.code, "url_refused", location)
        }
        var allowed = TusUpload(settings(allowed: ["Elsewhere.example"]), capabilities: offers("creation"), recorded: nil)
        _ = allowed.start()
        XCTAssertEqual(
            allowed.answered(answer(201, location: "http://elsewhere.example/files/abc")),
            .recordUploadURL(record(url: "http://elsewhere.example/files/abc")))
        var https = TusUpload(
            TusUpload.Settings(endpoint: "https://tus.example/files/", length: 100, chunkSize: 40, allowedHosts: ["tus.example"]),
            capabilities: offers("creation"), recorded: nil)
        _ = https.start()
        XCTAssertEqual(failure(https.answered(answer(201, location: "http://tus.example/files/abc")))?.code, "url_refused", "never down to http")
    }

    func testCreate_answeredOtherwise_endsTheAttemptWithTheAnswer() {
        for outcome in [UploadOutcome.status(413), .status(500), .failed(.unidentified("reset", beforeSending: false))] {
            var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: nil)
            _ = upload.start()
            XCTAssertEqual(failure(upload.answered(outcome)), outcome)
        }
    }

    // MARK: Resuming

    func testRecorded_isAskedWithHead_andGoesOnFromTheServersOffset() {
        var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(), 40))
        XCTAssertEqual(upload.start(), .head(url: url))
        XCTAssertEqual(upload.answered(answer(200, [.uploadOffset: "55", .uploadLength: "100"])), .patch(url: url, offset: 55, length: 40, checksum: nil))
        XCTAssertEqual(upload.resumedAt, 55)
    }

    func testRecorded_theServerHoldsEveryByte_isDone_withNothingSent() {
        var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(), 80))
        _ = upload.start()
        guard case .done = upload.answered(answer(200, [.uploadOffset: "100"])) else { return XCTFail() }
    }

    func testRecorded_gone_startsOver_sayingWhatWasThrownAway() {
        for status in [404, 410] {
            var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(), 80))
            _ = upload.start()
            XCTAssertEqual(
                upload.answered(.status(status)),
                .startOver(.init(reason: .uploadGone, detail: "HEAD of its upload URL answered \(status)", old: record(), discardedBytes: 80, stillExists: false)))
            XCTAssertEqual(upload.startedOver(), .create(bodyLength: 0, checksum: nil))
            XCTAssertEqual(upload.knownOffset, 0)
        }
    }

    func testRecorded_forAnotherEndpointOrSize_startsOver_owingItsTermination() {
        for old in [record(endpoint: "http://tus.example:1080/other/"), record(size: 99)] {
            var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: (old, 0))
            guard case .startOver(let over) = upload.start() else { return XCTFail() }
            XCTAssertEqual(over.reason, .objectChanged)
            XCTAssertTrue(over.stillExists)
            XCTAssertEqual(over.old, old)
        }
    }

    func testRecorded_onAnOriginSpooldDoesNotSendTo_startsOver_withoutATermination() {
        var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(url: "http://evil.example/files/abc"), 0))
        guard case .startOver(let over) = upload.start() else { return XCTFail() }
        XCTAssertFalse(over.stillExists, "no request of any kind goes to a URL the log alone vouches for")
    }

    func testHead_theServersUploadIsAnotherLength_startsOver() {
        var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(), 0))
        _ = upload.start()
        guard case .startOver(let over) = upload.answered(answer(200, [.uploadOffset: "0", .uploadLength: "101"])) else { return XCTFail() }
        XCTAssertEqual(over.reason, .objectChanged)
        XCTAssertTrue(over.stillExists)
    }

    func testHead_withoutAnOffset_orOtherwise_endsTheAttempt() {
        var noOffset = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(), 0))
        _ = noOffset.start()
        XCTAssertEqual(failure(noOffset.answered(answer(200)))?.class, .retryable)
        var refused = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(), 0))
        _ = refused.start()
        XCTAssertEqual(failure(refused.answered(.status(403))), .status(403))
    }

    func testStartingOver_twiceInOneAttempt_endsIt() {
        var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(), 0))
        _ = upload.start()
        guard case .startOver = upload.answered(.status(404)) else { return XCTFail() }
        _ = upload.startedOver()
        _ = upload.answered(answer(201, location: url))
        _ = upload.recorded()
        XCTAssertEqual(failure(upload.answered(.status(410))), .status(410))
    }

    // MARK: PATCH

    func testPatches_chunkByChunk_untilTheServerHoldsEveryByte() {
        var upload = TusUpload(settings(), capabilities: offers("creation,checksum", checksums: "sha256"), recorded: (record(), 0))
        _ = upload.start()
        XCTAssertEqual(upload.answered(answer(200, [.uploadOffset: "0"])), .patch(url: url, offset: 0, length: 40, checksum: .sha256))
        XCTAssertEqual(upload.answered(answer(204, [.uploadOffset: "40"])), .patch(url: url, offset: 40, length: 40, checksum: .sha256))
        XCTAssertEqual(upload.answered(answer(204, [.uploadOffset: "70"])), .patch(url: url, offset: 70, length: 30, checksum: .sha256),
                       "a server that took less: on from what it took")
        XCTAssertEqual(upload.knownOffset, 70)
        guard case .done = upload.answered(answer(204, [.uploadOffset: "100"])) else { return XCTFail() }
        XCTAssertTrue(upload.isFinished)
    }

    func testPatch_answeredWithAnOffsetItCannotHave_isRetryable() {
        for offset in ["40", "81", "", "x"] {
            var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(), 0))
            _ = upload.start()
            _ = upload.answered(answer(200, [.uploadOffset: "40"]))
            XCTAssertEqual(failure(upload.answered(answer(204, [.uploadOffset: offset])))?.class, .retryable, "offset '\(offset)' after 40 + 40 B")
        }
    }

    func testPatch_conflictMismatchOrDrop_resyncsWithHead_upToTheLimit() {
        var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(), 0))
        _ = upload.start()
        _ = upload.answered(answer(200, [.uploadOffset: "0"]))
        let setbacks: [UploadOutcome] = [.status(409), .status(460), .failed(.unidentified("reset", beforeSending: false))]
        for setback in setbacks {
            XCTAssertEqual(upload.answered(setback), .head(url: url))
            XCTAssertEqual(upload.answered(answer(200, [.uploadOffset: "10"])), .patch(url: url, offset: 10, length: 40, checksum: nil))
        }
        XCTAssertEqual(upload.resumedAt, 0, "a resync is not a resume: the offset of the first HEAD stays")
        XCTAssertEqual(failure(upload.answered(.status(409))), .status(409), "\(TusUpload.maximumResyncs) resyncs per attempt")
    }

    func testPatch_gone_startsOver_withTheBytesTheServerHeld() {
        var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(), 0))
        _ = upload.start()
        _ = upload.answered(answer(200, [.uploadOffset: "40"]))
        guard case .startOver(let over) = upload.answered(.status(404)) else { return XCTFail() }
        XCTAssertEqual(over.discardedBytes, 40)
        XCTAssertEqual(over.reason, .uploadGone)
    }

    func testPatch_otherAnswersAndEnds_endTheAttemptWithThem() {
        for outcome in [UploadOutcome.status(400), .status(500), .cancelled, .refusal(.blobChanged, "shrunk")] {
            var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: (record(), 0))
            _ = upload.start()
            _ = upload.answered(answer(200, [.uploadOffset: "0"]))
            XCTAssertEqual(failure(upload.answered(outcome)), outcome)
        }
    }

    func testEventsThatDoNotFitTheState_doNothing() {
        var upload = TusUpload(settings(), capabilities: offers("creation"), recorded: nil)
        XCTAssertEqual(upload.recorded(), .none)
        XCTAssertEqual(upload.startedOver(), .none)
        XCTAssertEqual(upload.answered(.status(200)), .none)
        _ = upload.start()
        _ = upload.answered(.status(500))
        XCTAssertEqual(upload.answered(.status(200)), .none, "finished")
    }

    // MARK: Rules

    func testHeaders_metadataIsBase64_andProducersCannotSetTheProtocolsOwn() {
        XCTAssertEqual(
            TusRequestHeaders.metadata(fileName: Array("cam 7/fox,1.jpg".utf8), fileType: "image/jpeg"),
            "filename Y2FtIDcvZm94LDEuanBn,filetype aW1hZ2UvanBlZw==")
        let merged = TusRequestHeaders.merged(
            own: ["Upload-Offset": "0", "tus-resumable": "0.2", "X-HTTP-Method-Override": "DELETE", "Authorization": "Bearer t"],
            tus: TusRequestHeaders.patch(offset: 40))
        XCTAssertEqual(merged, ["Authorization": "Bearer t", "Tus-Resumable": "1.0.0", "Upload-Offset": "40"])
        XCTAssertEqual(TusRequestHeaders.checksum(.sha1, digest: [0xde, 0xad]), ["Upload-Checksum": "sha1 3q0="])
    }

    func testAnswerHeaderLines_keepTheTusHeaders_inAnyCase() {
        var head = AnswerHead()
        for line in ["HTTP/1.1 204 No Content", "Upload-Offset: 42 ", "TUS-RESUMABLE: 1.0.0", "tus-extension: creation, termination",
                     "Tus-Checksum-Algorithm: sha1,sha256", "Upload-Length:100", "Tus-Max-Size: 7", "Tus-Version: 1.0.0", "Upload-Metadata: x"] {
            Array(line.utf8).withUnsafeBufferPointer { head.take(AnswerHeaderLine($0)) }
        }
        XCTAssertEqual(head.tus?.bytes(.uploadOffset), 42)
        XCTAssertEqual(head.tus?.bytes(.uploadLength), 100)
        XCTAssertEqual(head.tus?.list(.extensions), ["creation", "termination"])
        let offered = TusCapabilities(answer: head.tus)
        XCTAssertEqual(offered.maximumSize, 7)
        XCTAssertNil(offered.checksum, "no checksum extension offered")
        XCTAssertEqual(head.tus?.values.count, 7)
    }
}
