import Foundation
import SpoolCore
import SpoolTransport
import Synchronization
import XCTest

/// Multipart uploads against a scripted store, for what the real servers cannot show:
/// - a resumed upload that the store still lists but will not complete (`InvalidPart`: one
///   completed just before a crash while its listing lingered, or a part lost) starts over once
///   within the attempt, instead of failing the item for good; a second time, it fails. Seen in
///   a kill -9 soak against `rclone serve s3`: the object was whole, the item in failed/;
/// - SSE-C headers go with every step that needs them.
final class S3MultipartScriptedTests: XCTestCase {
    /// A store scripted by request: records every request as `METHOD query`.
    private final class ScriptedStore: UploadTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String] = []
        private var seenHeaders: [String: [String: String]] = [:]
        private let answer: @Sendable (String, String) -> UploadOutcome

        init(answer: @escaping @Sendable (_ method: String, _ query: String) -> UploadOutcome) { self.answer = answer }

        var requests: [String] { lock.withLock { seen } }
        /// The headers each request (`METHOD query`) was sent with, the last of each.
        var headers: [String: [String: String]] { lock.withLock { seenHeaders } }

        func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
            let query = request.url.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            lock.withLock {
                seen.append("\(request.method) \(query)")
                seenHeaders["\(request.method) \(query)"] = request.headers
            }
            let outcome = answer(request.method, query)
            DispatchQueue.global().async { completion(outcome) }
        }

        func cancelAll() {}
    }

    /// The part log as the spool would keep it, in memory.
    private final class MemoryJournal: PartJournal, @unchecked Sendable {
        let id: ItemID
        private let lock = NSLock()
        private var state: PartLogCodec.State?

        init(id: ItemID, state: PartLogCodec.State?) { (self.id, self.state) = (id, state) }

        var current: PartLogCodec.State? { lock.withLock { state } }
        func load() -> PartLogCodec.State? { lock.withLock { state } }
        func begin(_ state: PartLogCodec.State) throws { lock.withLock { self.state = state } }
        func record(part number: Int, etag: String) throws { lock.withLock { state?.parts[number] = etag } }
        func discard() { lock.withLock { state = nil } }
        func reached(_ step: MultipartStep) {}
    }

    private static let size = (10 << 20) + 1  // three parts of 5 MiB
    private static let url = "http://127.0.0.1:9/bucket/big.bin"

    private static func xml(_ body: String) -> UploadOutcome {
        var outcome = UploadOutcome.status(200, excerpt: body)
        outcome.responseBody = Array(body.utf8)
        return outcome
    }

    private static func error(_ status: Int, _ code: String) -> UploadOutcome {
        .status(status, excerpt: "<?xml version=\"1.0\"?><Error><Code>\(code)</Code><Message>\(code)</Message></Error>")
    }

    /// What a store answers; Complete of the upload `completeFails` says InvalidPart.
    private static func store(completeFails: Set<String>) -> ScriptedStore {
        ScriptedStore { method, query in
            let upload = query.components(separatedBy: "uploadId=").dropFirst().first ?? ""
            switch method {
            case "GET":  // ListParts: the old upload still lists every part
                return xml("<ListPartsResult>" + (1...3).map { "<Part><PartNumber>\($0)</PartNumber><ETag>\"e\($0)\"</ETag></Part>" }.joined()
                           + "<IsTruncated>false</IsTruncated></ListPartsResult>")
            case "POST" where query == "uploads=":
                return xml("<InitiateMultipartUploadResult><UploadId>new</UploadId></InitiateMultipartUploadResult>")
            case "PUT":
                var outcome = UploadOutcome.status(200)
                outcome.etag = "\"n\(query.prefix { $0 != "&" })\""
                return outcome
            case "POST":
                return completeFails.contains(upload) ? error(400, "InvalidPart")
                    : xml("<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>")
            case "DELETE":
                return .status(204)
            default:
                return .status(500)
            }
        }
    }

    private func upload(
        through store: ScriptedStore, headers: [String: String] = [:], resuming: Bool = true
    ) throws -> (UploadOutcome, MemoryJournal) {
        var request = try uploadRequest(to: Self.url, size: Self.size)
        request.headers = headers
        let signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"), region: "us-east-1")
        let journal = MemoryJournal(id: request.id, state: resuming ? PartLogCodec.State(
            size: Int64(Self.size), partSize: 5 << 20, region: "us-east-1", uploadID: "old", url: Self.url,
            parts: [1: "\"e1\"", 2: "\"e2\"", 3: "\"e3\""]) : nil)
        request.partJournal = journal
        let transport = S3SigningTransport(
            wrapping: store, signer: signer, clock: SystemClock(),
            multipart: .init(partSize: 5 << 20, concurrency: 2, deadlineSeconds: 10))
        let ended = expectation(description: "the attempt ends")
        let result = Mutex<UploadOutcome?>(nil)
        transport.start(request) { outcome in
            result.withLock { $0 = outcome }
            ended.fulfill()
        }
        wait(for: [ended], timeout: 10)
        return (try XCTUnwrap(result.withLock { $0 }), journal)
    }

    func testResumedUpload_theStoreWillNotComplete_startsOverOnce_andSucceeds() throws {
        let store = Self.store(completeFails: ["old"])
        let (outcome, journal) = try upload(through: store)

        XCTAssertEqual(outcome.httpStatus, 200, "\(outcome.summary); \(store.requests)")
        XCTAssertEqual(store.requests.filter { $0.hasPrefix("PUT ") }.count, 3, "every part sent to the new upload: \(store.requests)")
        XCTAssertTrue(store.requests.contains("DELETE uploadId=old"), "the old upload aborted: \(store.requests)")
        XCTAssertEqual(journal.current?.uploadID, "new", "the log names the new upload")
        XCTAssertEqual(journal.current?.parts.count, 3)
    }

    func testAStoreThatNeverCompletes_failsTheAttempt_afterOneStartOver() throws {
        let store = Self.store(completeFails: ["old", "new"])
        let (outcome, _) = try upload(through: store)

        XCTAssertEqual(outcome.httpStatus, 400, outcome.summary)
        XCTAssertEqual(outcome.class, .final)
        XCTAssertEqual(store.requests.filter { $0 == "POST uploads=" }.count, 1, "started over once: \(store.requests)")
    }

    /// SSE-C: the customer's key goes with CreateMultipartUpload, every part and the completion
    /// (S3 refuses a part without it), signed like every `x-amz-*` header; other headers of the
    /// item go with CreateMultipartUpload only.
    func testCustomerKeyHeaders_goWithEveryPartAndTheCompletion() throws {
        let sse = [
            "x-amz-server-side-encryption-customer-algorithm": "AES256",
            "x-amz-server-side-encryption-customer-key": "a2V5", "x-amz-server-side-encryption-customer-key-MD5": "bWQ1",
        ]
        let store = Self.store(completeFails: [])
        let (outcome, _) = try upload(through: store, headers: sse.merging(["x-amz-meta-camera": "7"]) { $1 }, resuming: false)

        XCTAssertEqual(outcome.httpStatus, 200, "\(outcome.summary); \(store.requests)")
        let steps = store.headers.filter { $0.key.hasPrefix("PUT ") || $0.key == "POST uploadId=new" }
        XCTAssertEqual(steps.count, 4, "three parts and the completion: \(store.requests)")
        for (step, headers) in steps {
            for name in sse.keys {
                XCTAssertEqual(headers[name.lowercased()], sse[name], "\(step) \(name)")
            }
            XCTAssertTrue(headers["Authorization"]?.contains("x-amz-server-side-encryption-customer-key-md5") == true, step)
            XCTAssertNil(headers["x-amz-meta-camera"], "\(step): the object's metadata goes with its creation only")
        }
        XCTAssertEqual(store.headers["POST uploads="]?["x-amz-meta-camera"], "7")
    }
}
