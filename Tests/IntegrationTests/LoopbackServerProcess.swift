import Foundation

/// Starting and stopping a real server (nginx, `rclone serve s3`) on 127.0.0.1 for a test: its
/// output discarded, ready once its port accepts a connection, its folder removed when it stops.
enum LoopbackServerProcess {
    /// Runs `process` and returns once `port` accepts a connection (at most `attempts` × 25 ms);
    /// throws with `log()` when the server exits or never listens.
    static func start(_ process: Process, port: Int, attempts: Int, name: String, log: () -> String) throws {
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<attempts {
            if NginxServer.canConnect(port) { return }
            guard process.isRunning else { break }
            usleep(25_000)
        }
        throw NSError(domain: name, code: 1, userInfo: [NSLocalizedDescriptionKey: "\(name) did not start: \(log())"])
    }

    /// Ends the server and removes its folder.
    static func stop(_ process: Process, root: String) {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: root)
    }
}
