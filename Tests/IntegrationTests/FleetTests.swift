import Foundation
import SpoolTestSupport
import XCTest

/// Several hosts, each with its own spool and `spoold run`, feeding one distributed store through
/// its S3 API: a SeaweedFS cluster of separate processes (issue 12).
final class FleetTests: XCTestCase {
    /// One host: its spool, its daemon (replaced when killed) and what its producer dropped.
    final class Host {
        let index: Int
        let spool: TestSpool
        var daemon: SpooldProcess?
        var dropped: [String: [UInt8]] = [:]
        var prefix: String { "host\(index)/" }

        init(index: Int, spool: TestSpool) { (self.index, self.spool) = (index, spool) }
    }

    func testFourSpools_intoASeaweedCluster_throughADaemonKillAndAGatewayRestart_everyObjectByteExact() throws {
        let cluster = try SeaweedCluster.start(self)
        let hosts = try (0..<4).map { Host(index: $0, spool: try TestSpool(self)) }
        addTeardownBlock { for host in hosts { host.daemon?.signal(SIGKILL) } }
        for host in hosts { host.daemon = try startDaemon(host, cluster) }

        // Wave 1: every producer drops its files at once; two hosts get a blob of three parts.
        try drop(wave: 1, into: hosts, bigOn: [0, 1])
        // kill -9 host 1's daemon once it is uploading (objects arrive, items are left), restart it.
        let victim = hosts[1]
        XCTAssertTrue(waitUntil(timeout: 60) { (cluster.client.keys("bucket", prefix: victim.prefix)?.count ?? 0) >= 3 },
                      "host 1 uploads nothing\n" + (victim.daemon?.readErr() ?? "") + cluster.logs)
        XCTAssertFalse(remaining(victim).isEmpty, "host 1 drained before the kill: the test needs more work in flight")
        victim.daemon?.signal(SIGKILL)
        XCTAssertEqual(try victim.daemon?.wait(timeout: 10).signal, SIGKILL)
        victim.daemon = try startDaemon(victim, cluster)

        // The S3 gateway dies (connections in flight cut) while wave 2 is dropped, then comes back.
        cluster.killGateway()
        try drop(wave: 2, into: hosts, bigOn: [2, 3])
        try cluster.startGateway()

        let drained = waitUntil(timeout: 90) { hosts.allSatisfy { self.remaining($0).isEmpty } }
        var stderr: [String] = []
        for host in hosts {
            host.daemon?.signal(SIGTERM)
            let result = try XCTUnwrap(host.daemon?.wait(timeout: 30))
            host.daemon = nil
            stderr.append("--- host \(host.index):\n" + result.stderr)
            XCTAssertEqual(result.exitCode, 0, "host \(host.index): \(result.stderr)")
        }
        XCTAssertTrue(drained, "spools left: \(hosts.map { remaining($0) })\n" + stderr.joined(separator: "\n") + "\n" + cluster.logs)

        XCTAssertTrue(stderr.contains { $0.contains("endpoint unreachable") && $0.contains("endpoint reachable again") },
                      "no daemon saw the gateway go and come back:\n" + stderr.joined(separator: "\n"))

        let client = cluster.client
        for host in hosts {
            XCTAssertEqual(host.spool.files(in: "failed"), [], "host \(host.index) dead-lettered items")
            let keys = try XCTUnwrap(client.keys("bucket", prefix: host.prefix), "ListObjectsV2 fails")
            XCTAssertEqual(keys, host.dropped.keys.map { host.prefix + $0 }.sorted(), "host \(host.index)'s objects")
            for (name, bytes) in host.dropped {
                let stored = client.object("bucket", host.prefix + name)
                XCTAssertTrue(stored == Data(bytes), "\(host.prefix + name): \(stored?.count ?? -1) bytes stored, \(bytes.count) dropped")
            }
        }
    }

    // MARK: - helpers

    private func startDaemon(_ host: Host, _ cluster: SeaweedCluster) throws -> SpooldProcess {
        try SpooldProcess(
            ["run", "--spool", host.spool.path, "--url", "s3://bucket/" + host.prefix, "--s3-endpoint", cluster.s3Endpoint,
             "--s3-part-size", "5M", "--settle", "0", "--retry-base", "0.2", "--max-backoff", "2"],
            environment: [
                "HOME": host.spool.root, "AWS_ACCESS_KEY_ID": SeaweedCluster.accessKey,
                "AWS_SECRET_ACCESS_KEY": SeaweedCluster.secretKey, "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
                "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "",
                "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
            ])
    }

    /// Each host's producer drops 12 small files (0 B to 300 KB, a third in a subfolder), and a
    /// 12 MiB blob (three 5 MiB parts) on the hosts in `bigOn`, all producers at once.
    private func drop(wave: Int, into hosts: [Host], bigOn: Set<Int>) throws {
        let plans: [[(String, [UInt8])]] = hosts.map { host in
            var random = SeededRandom(state: UInt64(wave * 100 + host.index))
            var files = (0..<12).map { i -> (String, [UInt8]) in
                let name = i % 3 == 0 ? "cam\(host.index)/w\(wave)-\(i).jpg" : "w\(wave)-\(i).dat"
                return (name, payload(i == 0 ? 0 : random.int(in: 1...300_000), seed: random.next()))
            }
            if bigOn.contains(host.index) { files.append(("w\(wave)-big.bin", payload(12 << 20, seed: random.next()))) }
            return files
        }
        for (host, files) in zip(hosts, plans) {
            try FileManager.default.createDirectory(atPath: host.spool.incoming + "/cam\(host.index)", withIntermediateDirectories: true)
            for (name, bytes) in files { host.dropped[name] = bytes }
        }
        let failures = LockedStrings()
        let spools = hosts.map(\.spool)
        DispatchQueue.concurrentPerform(iterations: hosts.count) { index in
            for (name, bytes) in plans[index] {
                do { try spools[index].drop(name, bytes) } catch { failures.append("\(name): \(error)") }
            }
        }
        XCTAssertEqual(failures.all, [])
    }

    /// The host's files not yet uploaded: in incoming/ (subfolders too), pending/ and inflight/.
    private func remaining(_ host: Host) -> [String] {
        let incoming = host.spool.incoming
        let dropped = ((FileManager.default.enumerator(atPath: incoming)?.allObjects as? [String]) ?? []).filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: incoming + "/" + path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
        return dropped.map { "incoming/" + $0 } + ["pending", "inflight"].flatMap { f in host.spool.files(in: f).map { "\(f)/\($0)" } }
    }
}

/// Strings appended from several threads.
final class LockedStrings: @unchecked Sendable {
    private let lock = NSLock()
    private var strings: [String] = []
    func append(_ string: String) { lock.withLock { strings.append(string) } }
    var all: [String] { lock.withLock { strings } }
}
