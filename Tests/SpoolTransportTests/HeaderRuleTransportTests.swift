import Foundation
import SpoolCore
import SpoolCurlTransport
import SpoolTransport
import UploadReceiver
import XCTest

/// Where each transport builds its request, a header that breaks the HTTP grammar is refused and
/// nothing is sent (`HeaderRule.requestProblem`): one list of requests, run against URLSession,
/// libcurl, and the S3 signer over each. The engine and the sidecar check first; this is the
/// check behind them, for a value that got past them (a json edited by hand).
final class HeaderRuleTransportTests: XCTestCase {
    private static var transports: [(String, () -> any UploadTransport)] { [
        ("urlsession", { URLSessionTransport(concurrency: 2, deadlineSeconds: 10, idleSeconds: 10) }),
        ("curl", { CurlTransport(deadlineSeconds: 10, idleSeconds: 10, connections: 4) }),
        ("s3+urlsession", { s3(over: URLSessionTransport(concurrency: 2, deadlineSeconds: 10, idleSeconds: 10)) }),
        ("s3+curl", { s3(over: CurlTransport(deadlineSeconds: 10, idleSeconds: 10, connections: 4)) }),
    ] }

    private static func s3(over inner: any UploadTransport) -> any UploadTransport {
        S3SigningTransport(
            wrapping: inner, signer: SigV4Signer(credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: "secret"), region: "us-east-1"),
            clock: SystemClock())
    }

    /// Requests no transport may send, with words the refusal must hold.
    private static var refused: [(String, (inout UploadRequest) -> Void, [String])] { [
        ("CRLF in the content type", { $0.contentType = "text/plain\r\nHost: evil.example" }, ["Content-Type", "carriage return"]),
        ("a second request in the content type", {
            $0.contentType = "text/plain\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
        }, ["Content-Type", "carriage return"]),
        ("LF in a header value", { $0.headers["X-Camera"] = "7\nTransfer-Encoding: chunked" }, ["X-Camera", "line feed"]),
        ("NUL in a header value", { $0.headers["X-Camera"] = "7\u{0}8" }, ["X-Camera", "NUL"]),
        ("ESC in a header value", { $0.headers["X-Camera"] = "7\u{1B}[2J" }, ["X-Camera", "0x1B"]),
        ("a space in a header name", { $0.headers["X Camera"] = "7" }, ["X Camera", "name"]),
        ("CR in a header name", { $0.headers["X-A\r\nHost"] = "7" }, ["X-A\\r\\nHost", "name"]),
        ("a header spoold sets itself", { $0.headers["Transfer-Encoding"] = "chunked" }, ["Transfer-Encoding", "itself"]),
    ] }

    private func outcome(of request: UploadRequest, on transport: any UploadTransport) throws -> UploadOutcome {
        let ended = expectation(description: "the attempt ended")
        let box = Box()
        transport.start(request) { outcome in
            box.set(outcome)
            ended.fulfill()
        }
        wait(for: [ended], timeout: 15)
        return try XCTUnwrap(box.value)
    }

    func testHeadersBreakingTheGrammar_areRefused_nothingSent_onEveryTransport() throws {
        let receiver = UploadReceiver(script: .always(201))
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        var sent = 0
        for (transportName, make) in Self.transports {
            let transport = make()
            defer { transport.shutdown() }
            for (what, change, words) in Self.refused {
                var request = try uploadRequest(to: receiver.baseURL + "/up/x")
                change(&request)
                let outcome = try outcome(of: request, on: transport)
                XCTAssertEqual(outcome.class, .final, "\(transportName), \(what): \(outcome)")
                let text = outcome.summary
                XCTAssertTrue(text.contains("not sent"), "\(transportName), \(what): \(text)")
                for word in words { XCTAssertTrue(text.contains(word), "\(transportName), \(what): '\(text)' lacks '\(word)'") }
                XCTAssertFalse(text.contains("evil") || text.contains("smuggled") || text.contains("chunked"),
                               "the value is never repeated: \(text)")
            }
            XCTAssertEqual(receiver.requests.count, sent, "\(transportName): nothing reached the server")

            // A tab, UTF-8 text and an `x-amz-meta-*` header are fine, and are sent.
            var fine = try uploadRequest(to: receiver.baseURL + "/up/fine")
            fine.headers = ["X-Amz-Meta-Caption": "a\tfox, café"]
            fine.contentType = "text/plain; charset=utf-8"
            let answered = try outcome(of: fine, on: transport)
            XCTAssertEqual(answered.httpStatus, 201, "\(transportName): \(answered)")
            sent += 1
            XCTAssertEqual(receiver.requests.count, sent, transportName)
        }
    }

    /// S3 never sends `x-amz-copy-source*`, whoever put it in the request: it would make the PUT a
    /// CopyObject of any object the daemon's key can read.
    func testS3_neverSendsCopySource() throws {
        let receiver = UploadReceiver(script: .always(200))
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        for (transportName, make) in Self.transports where transportName.hasPrefix("s3") {
            let transport = make()
            defer { transport.shutdown() }
            for name in ["x-amz-copy-source", "X-Amz-Copy-Source-If-Match", "x-amz-copy-source-range"] {
                var request = try uploadRequest(to: receiver.baseURL + "/bucket/key")
                request.headers = [name: "otherbucket/secret.txt"]
                let outcome = try outcome(of: request, on: transport)
                XCTAssertEqual(outcome.class, .final, "\(transportName), \(name): \(outcome)")
                XCTAssertTrue(outcome.summary.contains("never sent to S3"), outcome.summary)
            }
            XCTAssertEqual(receiver.requests.count, 0, transportName)
        }
    }
}

private final class Box: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: UploadOutcome?
    func set(_ outcome: UploadOutcome) { lock.withLock { stored = outcome } }
    var value: UploadOutcome? { lock.withLock { stored } }
}
