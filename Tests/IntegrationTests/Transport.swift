import XCTest

/// The transports `spoold run|drain` can upload with (`--transport`). A test of a behaviour that
/// goes through the transport runs its body once per transport (`TransportTestCase.forEachTransport`);
/// a behaviour only one transport has is declared in `Transport.Only`, the one list of them, with
/// why. A test of what sits above the transport (usage errors, hooks, the spool) runs once, with
/// the default transport, and says nothing of it.
enum Transport: String, CaseIterable, CustomStringConvertible {
    case urlSession = "urlsession"
    case curl

    /// The command-line arguments that choose it.
    var arguments: [String] { ["--transport", rawValue] }

    var description: String { rawValue }

    /// What only one transport does, and why the other is not asked.
    enum Only: CaseIterable {
        /// `--cacert`, `--capath`, `--cert`/`--key`, HTTP/2 by ALPN and `--http1.1`: libcurl's own
        /// options, which URLSession on Linux does not offer (`spoold` refuses them without
        /// `--transport curl`).
        case curlOptions
        /// What spoold does about FoundationNetworking's own failures: answers it collects before
        /// the delegate takes them (floods), a cancel stuck on its work queue, a stop longer than
        /// the deadline while it holds a body stream. libcurl has none of them.
        case foundationNetworking

        var transport: Transport {
            switch self {
            case .curlOptions: .curl
            case .foundationNetworking: .urlSession
            }
        }
    }
}

/// A test case whose tests may run their body once per transport; every failure names the
/// transport it happened with.
class TransportTestCase: XCTestCase {
    /// The transport of the body running now (nil outside `forEachTransport` and `only`).
    private(set) var transport: Transport?

    /// `--transport` for the body running now; none outside the loops (the default transport).
    var transportArguments: [String] { transport?.arguments ?? [] }

    /// Runs `body` with each transport in turn: a behaviour every transport must have.
    func forEachTransport(_ body: (Transport) throws -> Void) throws {
        for transport in Transport.allCases { try run(transport, body) }
    }

    /// Runs `body` with the one transport that has the behaviour (see `Transport.Only`).
    func only(_ specific: Transport.Only, _ body: (Transport) throws -> Void) throws {
        try run(specific.transport, body)
    }

    private func run(_ transport: Transport, _ body: (Transport) throws -> Void) throws {
        self.transport = transport
        defer { self.transport = nil }
        do {
            try body(transport)
        } catch let skip as XCTSkip {
            throw skip
        } catch {
            throw Failure(transport: transport, error: error)
        }
    }

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        let named = transport.map { "[\($0)] \(description)" } ?? description
        super.recordFailure(withDescription: named, inFile: filePath, atLine: lineNumber, expected: expected)
    }

    /// An error a body threw, with the transport it ran with.
    struct Failure: Error, CustomStringConvertible {
        var transport: Transport
        var error: any Error
        var description: String { "[\(transport)] \(error)" }
    }
}

/// The list stays one list: no test names a transport outside `Transport`, and no test class
/// overrides a test (an override that skips, or does nothing, reported a pass that tested nothing).
final class TransportListTests: XCTestCase {
    private var testSources: [(name: String, text: String)] {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let files = FileManager.default.enumerator(atPath: tests.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        return files.compactMap { name in (try? String(contentsOf: tests.appendingPathComponent(name), encoding: .utf8)).map { (name, $0) } }
    }

    func testNoTestNamesATransportOutsideTheList_andNoneOverridesATest() {
        let sources = testSources
        XCTAssertGreaterThan(sources.count, 50, "the test sources were found")
        for (name, text) in sources where !name.hasSuffix("IntegrationTests/Transport.swift") {
            for transport in Transport.allCases {
                XCTAssertFalse(text.contains("\"--transport\", \"\(transport.rawValue)\""), "\(name) names --transport \(transport) itself")
            }
            XCTAssertFalse(text.contains("override func test"), "\(name) overrides a test")
            XCTAssertFalse(text.contains("class var transportArguments"), "\(name) makes a transport by subclassing")
        }
    }
}
