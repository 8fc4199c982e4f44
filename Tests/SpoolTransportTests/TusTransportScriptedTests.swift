import Foundation
import Glibc
import SpoolCore
import SpoolSystem
import SpoolTransport
import Synchronization
import XCTest

/// `TusTransport` against a scripted tus server, for what tuspyserver cannot show: what an
/// endpoint offers is asked once for items that start together and kept, and asked again after an
/// attempt that failed; a checksum mismatch (460) is followed by a HEAD and the chunk sent again;
/// the protocol's headers are spoold's own, whatever an item asks.
final class TusTransportScriptedTests: XCTestCase {
    private let endpoint = "http://tus.example:1080/files/"

    /// Answers by method; records `METHOD url` and the headers of each request.
    private final class ScriptedServer: UploadTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String] = []
        private var seenHeaders: [[String: String]] = []
        private let answer: @Sendable (_ method: String, _ headers: [String: String], _ count: Int) -> UploadOutcome

        init(answer: @escaping @Sendable (_ method: String, _ headers: [String: String], _ count: Int) -> UploadOutcome) {
            self.answer = answer
        }

        var requests: [String] { lock.withLock { seen } }
        var headers: [[String: String]] { lock.withLock { seenHeaders } }

        func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
            let count: Int = lock.withLock {
                seen.append("\(request.method) \(request.url)")
                seenHeaders.append(request.headers)
                return seen.filter { $0.hasPrefix(request.method + " ") }.count
            }
            let outcome = answer(request.method, request.headers, count)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { completion(outcome) }
        }

        func cancelAll() {}
    }

    private static func tus(_ status: Int, location: String? = nil, _ fields: [TusHeaders.Field: String] = [:]) -> UploadOutcome {
        var answer = HTTPAnswer(status: status)
        answer.location = location
        answer.tus = TusHeaders(fields.merging([.resumable: "1.0.0"]) { $1 })
        return .answered(answer)
    }

    /// A server of `size`-byte uploads that takes every PATCH whole.
    private static func server(size: Int, failFirstPost: Bool = false, mismatchFirstPatch: Bool = false) -> ScriptedServer {
        ScriptedServer { method, headers, count in
            switch method {
            case "OPTIONS": return tus(204, [.version: "1.0.0", .extensions: "creation,termination,checksum", .checksumAlgorithms: "sha256"])
            case "POST": return failFirstPost && count == 1 ? .status(503) : tus(201, location: "/files/u\(count)")
            case "HEAD": return tus(200, [.uploadOffset: "0", .uploadLength: "\(size)"])
            case "PATCH":
                if mismatchFirstPatch && count == 1 { return .status(460) }
                let offset = Int(headers["Upload-Offset"] ?? "") ?? -1
                return tus(204, [.uploadOffset: "\(min(size, offset + 1024))"])
            default: return .status(405)
            }
        }
    }

    private func blob(_ bytes: [UInt8]) throws -> BlobBody {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-tus-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDONLY)
        return BlobBody(descriptor: .init(rawValue: fd), size: Int64(bytes.count))
    }

    private func request(_ n: Int, size: Int = 2048, headers: [String: String] = [:]) throws -> UploadRequest {
        var request = UploadRequest(
            id: ItemID("20261121T141003123Z-000\(n)-9f3ab2c1-t")!, attempt: 1, url: endpoint, method: "PUT",
            body: try blob([UInt8](repeating: UInt8(n), count: size)), contentType: "image/jpeg", headers: headers)
        request.uploadName = Array("cam 7/f\(n).jpg".utf8)
        return request
    }

    private func upload(_ transport: TusTransport, _ requests: [UploadRequest]) -> [UploadOutcome] {
        let outcomes = Mutex([Int: UploadOutcome]())
        let done = DispatchGroup()
        for (i, request) in requests.enumerated() {
            done.enter()
            transport.start(request) { outcome in
                outcomes.withLock { $0[i] = outcome }
                done.leave()
            }
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        return outcomes.withLock { all in requests.indices.map { all[$0] ?? .cancelled } }
    }

    private func transport(_ server: ScriptedServer) -> TusTransport {
        TusTransport(wrapping: server, settings: .init(chunkSize: 1024), clock: SystemClock())
    }

    func testItemsStartingTogether_askOnce_andLaterOnes_askNothing() throws {
        let server = Self.server(size: 2048)
        let tus = transport(server)
        let first = upload(tus, try (1...3).map { try request($0) })
        XCTAssertEqual(first.map(\.class), [.success, .success, .success])
        XCTAssertEqual(server.requests.filter { $0.hasPrefix("OPTIONS") }.count, 1, server.requests.joined(separator: "\n"))
        _ = upload(tus, [try request(4)])
        XCTAssertEqual(server.requests.filter { $0.hasPrefix("OPTIONS") }.count, 1, "kept")
    }

    func testAFailedAttempt_forgetsWhatTheEndpointOffers_soTheNextAsksAgain() throws {
        let server = Self.server(size: 2048, failFirstPost: true)
        let tus = transport(server)
        XCTAssertEqual(upload(tus, [try request(1)]).map(\.class), [.retryable])
        XCTAssertEqual(upload(tus, [try request(2)]).map(\.class), [.success])
        XCTAssertEqual(server.requests.filter { $0.hasPrefix("OPTIONS") }.count, 2, server.requests.joined(separator: "\n"))
    }

    func testAChecksumMismatch_isFollowedByAHead_andTheChunkSentAgain_withItsChecksum() throws {
        let server = Self.server(size: 2048, mismatchFirstPatch: true)
        let outcomes = upload(transport(server), [try request(1)])
        XCTAssertEqual(outcomes.map(\.class), [.success])
        XCTAssertEqual(server.requests.map { $0.split(separator: " ")[0] }, ["OPTIONS", "POST", "PATCH", "HEAD", "PATCH", "PATCH"])
        let patches = server.headers.filter { $0["Upload-Offset"] != nil }
        let expected = "sha256 " + Base64.encode(SHA256.hash([UInt8](repeating: 1, count: 1024)))
        XCTAssertEqual(patches.first?["Upload-Checksum"], expected)
    }

    func testTheProtocolsHeaders_areSpooldsOwn_andTheMetadataNamesTheItem() throws {
        let server = Self.server(size: 1024)
        let item = try request(1, size: 1024, headers: [
            "Upload-Offset": "999", "X-HTTP-Method-Override": "DELETE", "Tus-Resumable": "0.2.2", "Authorization": "Bearer k",
        ])
        XCTAssertEqual(upload(transport(server), [item]).map(\.class), [.success])
        let post = try XCTUnwrap(server.headers.first { $0["Upload-Length"] != nil })
        XCTAssertEqual(post["Upload-Length"], "1024")
        XCTAssertEqual(post["Upload-Metadata"], "filename Y2FtIDcvZjEuanBn,filetype aW1hZ2UvanBlZw==")
        let patch = try XCTUnwrap(server.headers.first { $0["Upload-Offset"] != nil })
        XCTAssertEqual(patch["Upload-Offset"], "0")
        XCTAssertEqual(patch["Tus-Resumable"], "1.0.0")
        XCTAssertNil(patch["X-HTTP-Method-Override"])
        XCTAssertEqual(patch["Authorization"], "Bearer k", "the item's other headers go with every request")
        XCTAssertEqual(server.requests.last, "PATCH http://tus.example:1080/files/u1")
    }

    /// A termination whose OPTIONS the server refuses for want of credentials (401) is not taken
    /// for "no termination offered" (which confirmed it, and the upload was left on the server):
    /// it is not confirmed, so it stays owed, and nothing is remembered of the server. With the
    /// operator's headers it is sent and confirmed.
    func testATerminationWhoseOptionsIsRefusedForCredentials_isNotConfirmed_andWithThemIsSent() throws {
        let server = ScriptedServer { method, headers, _ in
            guard headers["Authorization"] == "Bearer k" else { return .status(401) }
            return method == "OPTIONS" ? Self.tus(204, [.version: "1.0.0", .extensions: "creation,termination"]) : Self.tus(204)
        }
        let owed = OwedAbort(
            tusTerminationOf: ItemID("20261121T141003123Z-0001-9f3ab2c1-t")!, uploadURL: endpoint + "u1", endpoint: endpoint,
            since: Timestamp(millisecondsSinceEpoch: 0))

        XCTAssertEqual(TusTransport.terminate([owed], transport: server, clock: SystemClock(), timeoutSeconds: 5), [false])
        XCTAssertEqual(server.requests, ["OPTIONS \(endpoint)"], "no DELETE, and no conclusion drawn")

        XCTAssertEqual(
            TusTransport.terminate([owed], headers: ["Authorization": "Bearer k"], transport: server, clock: SystemClock(), timeoutSeconds: 5),
            [true])
        XCTAssertEqual(server.requests.suffix(2), ["OPTIONS \(endpoint)", "DELETE \(endpoint)u1"])
    }

    /// A part recorder whose log holds `logged`; it answers every record at once but a
    /// start-over, which waits for `answerStartOvers` (its sync held, as the daemon's may be).
    private final class HeldStartOverRecorder: PartRecorder, @unchecked Sendable {
        let id: ItemID
        private let logged: LoggedUpload?
        private let lock = NSLock()
        private var records: [PartRecord] = []
        private var held: [@Sendable (PartRecorded) -> Void] = []

        init(id: ItemID, logged: LoggedUpload?) { (self.id, self.logged) = (id, logged) }

        var asked: [PartRecord] { lock.withLock { records } }
        func load() -> LoggedUpload? { logged }
        func record(_ record: PartRecord, then: @escaping @Sendable (PartRecorded) -> Void) {
            let holds = lock.withLock {
                records.append(record)
                guard case .startOver = record else { return false }
                held.append(then)
                return true
            }
            if !holds { then(.recorded) }
        }
        func answerStartOvers() { for then in lock.withLock({ defer { held = [] }; return held }) { then(.recorded) } }
        func noteOffset(_ offset: Int64) {}
        func reached(_ step: MultipartStep) {}
        func reached(_ step: TusStep) {}
    }

    /// A part log of an S3 upload (`--url` switched from s3:// to tus+): the attempt has the daemon
    /// give it up as a start-over (its abort owed, the log discarded) and sends nothing to the tus
    /// server until that is recorded; then it begins anew.
    func testALogOfAnS3Upload_isGivenUpThroughTheDaemon_beforeAnyRequest() throws {
        let server = Self.server(size: 2048)
        var item = try request(1)
        let s3 = PartLogCodec.State(size: 2048, partSize: 5 << 20, region: "us-east-1", uploadID: "u1", url: "http://h/b/k")
        let recorder = HeldStartOverRecorder(id: item.id, logged: .s3(s3))
        item.partRecorder = recorder
        let outcome = Mutex<UploadOutcome?>(nil)
        transport(server).start(item) { result in outcome.withLock { $0 = result } }
        let deadline = Date().addingTimeInterval(10)
        while recorder.asked.isEmpty && Date() < deadline { usleep(1000) }
        XCTAssertEqual(recorder.asked, [.startOver(StartOverRecord(otherKind: .s3(s3)))])
        usleep(50_000)  // a moment to misbehave
        XCTAssertEqual(server.requests, [], "nothing sent before the S3 upload's abort is owed")

        recorder.answerStartOvers()
        while outcome.withLock({ $0 }) == nil && Date() < deadline { usleep(1000) }
        XCTAssertEqual(outcome.withLock { $0 }?.class, .success)
        XCTAssertEqual(server.requests.prefix(2).map { $0.split(separator: " ")[0] }, ["OPTIONS", "POST"], "a new upload")
        XCTAssertEqual(recorder.asked.count, 2, "the start-over, then the new upload URL: \(recorder.asked)")
    }
}
