import Foundation
import SpoolCore
import SpoolCurlTransport
import SpoolSystem
import SpoolTransport
import Synchronization
import UploadReceiver
import XCTest

/// What every transport does the same way, because `HTTPAttempt` decides it and the body is read
/// by one `BodyReader`: one list of behaviours, each run against URLSession and libcurl in turn
/// (the failure message names the transport). The rules where the two used to differ are here:
/// a blob that fails mid-send, `--limit-rate`, the answer's cut.
final class TransportContractTests: XCTestCase {
    private struct Transport {
        var name: String
        var make: (_ deadline: Double, _ rate: BodyRateGate?) -> any UploadTransport
    }

    private static var transports: [Transport] { [
        Transport(name: "urlsession") { URLSessionTransport(concurrency: 4, deadlineSeconds: $0, idleSeconds: $0, rate: $1) },
        Transport(name: "curl") { CurlTransport(deadlineSeconds: $0, idleSeconds: $0, connections: 4, rate: $1) },
    ] }

    /// Runs `body` once per transport, made with `deadline` and `rate`; shut down afterwards.
    private func eachTransport(
        deadline: Double = 20, rate: @autoclosure () -> BodyRateGate? = nil,
        _ body: (_ name: String, _ transport: any UploadTransport, _ rate: BodyRateGate?) throws -> Void
    ) rethrows {
        for transport in Self.transports {
            let gate = rate()
            let made = transport.make(deadline, gate)
            defer { made.shutdown() }
            try body(transport.name, made, gate)
        }
    }

    private func startReceiver(_ script: ResponseScript) throws -> UploadReceiver {
        let receiver = UploadReceiver(script: script, keepBodiesInMemory: false)
        try receiver.start()
        addTeardownBlock { receiver.stop() }
        return receiver
    }

    /// Starts `requests` at once and waits for their outcomes, in order.
    private func outcomes(_ requests: [UploadRequest], on transport: any UploadTransport, timeout: Double = 30) throws -> [UploadOutcome] {
        let results = Mutex([UploadOutcome?](repeating: nil, count: requests.count))
        let group = DispatchGroup()
        for (i, request) in requests.enumerated() {
            group.enter()
            transport.start(request) { outcome in
                results.withLock { $0[i] = outcome }
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + timeout), .success, "every attempt ended")
        return results.withLock { $0 }.map { $0 ?? .refusal(.urlRefused, "no outcome") }
    }

    private func outcome(_ request: UploadRequest, on transport: any UploadTransport) throws -> UploadOutcome {
        try outcomes([request], on: transport)[0]
    }

    // MARK: The list

    /// A blob that cannot be read to its recorded size mid-send is the item's fault: a final
    /// refusal (`blob_changed`) with either transport. (URLSession made it final, libcurl
    /// retryable, before the attempt decided it.)
    func testBlobShrunkMidSend_isAFinalRefusal() throws {
        let receiver = try startReceiver(.always(201))
        try eachTransport { name, transport, _ in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-shrunk-\(UUID().uuidString)")
            try Data(repeating: 3, count: 256 << 10).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            var request = try uploadRequest(to: receiver.baseURL + "/up/shrunk-\(name)")
            request.body = BlobBody(descriptor: FileDescriptor(rawValue: open(file.path, O_RDONLY | O_CLOEXEC)), size: 1 << 20)
            let outcome = try outcome(request, on: transport)
            XCTAssertEqual(outcome.class, .final, "\(name): \(outcome)")
            XCTAssertEqual(outcome.code, "blob_changed", "\(name): \(outcome)")
            XCTAssertTrue(outcome.summary.contains("shrank while it was sent"), "\(name): \(outcome.summary)")
        }
    }

    /// `--limit-rate` is one bucket for every body of the daemon: every byte either transport
    /// sends goes through the daemon's gate. (libcurl gave each transfer an equal share of its
    /// own, which a transfer waiting for its answer kept unused.)
    func testLimitRate_everyBodyByteGoesThroughTheDaemonsGate() throws {
        let receiver = try startReceiver(.always(201))
        try eachTransport(rate: BodyRateGate(bytesPerSecond: 4 << 20)) { name, transport, gate in
            let requests = try (0..<3).map { try uploadRequest(to: receiver.baseURL + "/up/rate-\(name)-\($0)", size: 300_000) }
            let ended = try outcomes(requests, on: transport)
            XCTAssertEqual(ended.map(\.class), [.success, .success, .success], name)
            XCTAssertEqual(gate?.bytesGranted, 900_000, "\(name): every body byte took its turn at the one gate")
        }
    }

    /// An answer is read up to 1 MiB: past that its status is the outcome and the transfer ends,
    /// with either transport (libcurl read HTTP answers to their end, or to the deadline).
    func testEndlessAnswer_isCutAfterOneMiB_itsStatusIsTheOutcome() throws {
        let receiver = try startReceiver(.always(ScriptedResponse(status: 201, fault: .endlessAnswer)))
        try eachTransport(deadline: 20) { name, transport, _ in
            let started = Date()
            let outcome = try outcome(try uploadRequest(to: receiver.baseURL + "/up/endless-\(name)"), on: transport)
            XCTAssertEqual(outcome.answer?.status, 201, "\(name): \(outcome)")
            XCTAssertLessThan(Date().timeIntervalSince(started), 15, "\(name): cut, not ended by the deadline")
        }
    }

    /// A server that answers before it has read the body, then drops the connection while the
    /// body is still being sent, has answered: the answer is the outcome, and nothing is sent
    /// twice (URLSession reported "connection lost mid-request" and the item went again).
    func testEarlyAnswer_thenAReset_isTheAnswer_sentOnce() throws {
        let receiver = try startReceiver(.always(ScriptedResponse(status: 201, fault: .answerThenReset(bodyBytes: 0))))
        try eachTransport { name, transport, _ in
            let before = receiver.requests.count
            let outcome = try outcome(try uploadRequest(to: receiver.baseURL + "/up/early-\(name)", size: 32 << 20), on: transport)
            XCTAssertEqual(outcome.answer?.status, 201, "\(name): \(outcome)")
            XCTAssertEqual(outcome.class, .success, name)
            XCTAssertEqual(receiver.requests.count - before, 1, "\(name): one request")
        }
    }

    /// A redirect is followed by the attempt, the body sent again whole on the new hop, with the
    /// same headers.
    func testRedirect307_isFollowed_theBodySentAgainWhole() throws {
        let receiver = try startReceiver(ResponseScript { request in
            request.target.hasPrefix("/first/") ? .status(307, headers: [("Location", "/second" + request.target.dropFirst(6))]) : .status(201)
        })
        try eachTransport { name, transport, _ in
            var request = try uploadRequest(to: receiver.baseURL + "/first/\(name)", size: 70_000)
            request.headers = ["X-Camera": "7"]
            let outcome = try outcome(request, on: transport)
            XCTAssertEqual(outcome.answer?.status, 201, "\(name): \(outcome)")
            let hops = receiver.requests.filter { $0.target.hasSuffix("/\(name)") }
            XCTAssertEqual(hops.map(\.target), ["/first/\(name)", "/second/\(name)"], name)
            XCTAssertEqual(hops.map(\.bodyLength), [70_000, 70_000], name)
            XCTAssertEqual(hops.map { $0.header("X-Camera") }, ["7", "7"], name)
            XCTAssertEqual(Set(hops.map { $0.header("Idempotency-Key") }).count, 1, name)
            XCTAssertEqual(hops.map { $0.header("User-Agent") }, [SpooldVersion.userAgent, SpooldVersion.userAgent], name)
        }
    }

    /// A refused port is an outage (nothing went out); a connection dropped mid-body is retryable.
    func testRefusedPort_isAnOutage_aDropMidBody_isRetryable() throws {
        let port = try freePort()
        let receiver = try startReceiver(.always(.faulted(.closeMidBody)))
        try eachTransport { name, transport, _ in
            let refused = try outcome(try uploadRequest(to: "http://127.0.0.1:\(port)/up/x"), on: transport)
            XCTAssertEqual(refused.class, .outage, "\(name): \(refused)")
            XCTAssertEqual(refused.code, "connection_refused", name)
            let dropped = try outcome(try uploadRequest(to: receiver.baseURL + "/up/drop-\(name)", size: 4 << 20), on: transport)
            XCTAssertEqual(dropped.class, .retryable, "\(name): \(dropped)")
        }
    }

    private func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
