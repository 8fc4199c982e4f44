import Foundation
import XCTest

/// Floods of files into a running daemon, against nginx, with each transport: no fault anywhere,
/// so every file reaches nginx exactly once. The duplicates once seen without any fault (a file
/// answered 201 and sent again after "connection lost mid-request") came from answers taken for
/// lost requests: nginx's `/early/` answers 201 before it has read a body and then discards the
/// rest, as the benchmark's `/discard/` does, and the larger files' bodies arrive after their answer.
final class NginxFloodTests: TransportTestCase {
    func testFlood_intoARunningDaemon_eachFileReachesNginxOnce() throws {
        guard let binary = NginxServer.binary else {
            throw XCTSkip("nginx is not installed (scripts/test installs it from Debian packages)")
        }
        try forEachTransport { transport in
            let nginx = try NginxServer(binary: binary)
            defer { nginx.stop() }
            for location in ["early", "up"] {
                let spool = try TestSpool(self)
                let daemon = try SpooldProcess(
                    ["run", "--spool", spool.path, "--url", "http://127.0.0.1:\(nginx.port)/\(location)/", "--settle", "0",
                     "--concurrency", "16", "--keep-done"] + transportArguments)
                addTeardownBlock { daemon.signal(SIGKILL) }
                let before = nginx.answered.count
                var names: [String] = []
                for n in 0..<240 {
                    let name = "\(transport)-\(location)-\(n).bin"
                    try spool.drop(name, payload(n % 30 == 0 ? 512 << 10 : 4096, seed: UInt64(n)))
                    names.append(name)
                }
                func uploaded() -> Int { spool.files(in: "done").filter { $0.hasSuffix(".json") }.count }
                XCTAssertTrue(waitUntil(timeout: 90) { uploaded() + spool.files(in: "failed").count >= names.count },
                              "\(location): \(nginx.answered.count - before) requests; \(daemon.readErr().suffix(2000))")
                daemon.signal(SIGTERM)
                XCTAssertEqual(try daemon.wait(timeout: 30).exitCode, 0, location)

                let paths = nginx.answered.dropFirst(before).map(\.path)
                let duplicates = paths.count - Set(paths).count
                XCTAssertEqual(duplicates, 0, "\(location): files that reached nginx twice without a fault")
                XCTAssertEqual(Set(paths), Set(names.map { "/\(location)/\($0)" }), location)
                XCTAssertEqual(spool.files(in: "failed"), [], location)
                XCTAssertEqual(uploaded(), names.count, "\(location): every file uploaded")
            }
        }
    }
}
