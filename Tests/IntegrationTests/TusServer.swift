import Foundation
import XCTest

/// A real tus 1.0 server on 127.0.0.1: tuspyserver run by uvicorn (`scripts/tus-server`), storing
/// each upload in a folder of its own as `<id>` (the bytes) and `<id>.info` (JSON: metadata,
/// size, offset). Installed by scripts/test into the project's virtual environment (scripts/pytools
/// tus); tests skip, saying so, without it.
final class TusServer {
    let storage: String
    /// `http://127.0.0.1:PORT/files/`, as the server said.
    let endpoint: String
    var port: Int { Int(endpoint.split(separator: ":").last!.prefix { $0.isNumber })! }
    private let root: String
    private let process = Process()
    private let outputPath: String

    /// One stored upload.
    struct Upload {
        var id: String
        var data: Data
        var info: [String: Any]
        var metadata: [String: String] { info["metadata"] as? [String: String] ?? [:] }
        var offset: Int { info["offset"] as? Int ?? -1 }
        var size: Int { info["size"] as? Int ?? -1 }
    }

    /// The server, or a skip that says how to get it.
    /// - Parameters:
    ///   - checksum: also offer the checksum extension (checked in front of tuspyserver).
    ///   - extensions: offer only these of tuspyserver's extensions.
    ///   - requiredHeader: answer 401 to every request without this header ('Name: value').
    static func start(
        _ test: XCTestCase, checksum: Bool = false, extensions: [String]? = nil, requiredHeader: String? = nil
    ) throws -> TusServer {
        guard PyTools.program("uvicorn") != nil else { throw PyTools.missing("tus", "tuspyserver with uvicorn") }
        let server = try TusServer(checksum: checksum, extensions: extensions, requiredHeader: requiredHeader)
        test.addTeardownBlock { server.stop() }
        return server
    }

    private init(checksum: Bool, extensions: [String]?, requiredHeader: String?) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-tus-\(UUID().uuidString)").path
        storage = root + "/files"
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        outputPath = root + "/server.out"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [ScriptHelpTests.repository.appendingPathComponent("scripts/tus-server").path, "--dir", storage]
            + (checksum ? ["--checksum"] : []) + (extensions.map { ["--extensions", $0.joined(separator: ",")] } ?? [])
            + (requiredHeader.map { ["--require-header", $0] } ?? [])
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The first line names the port, printed once the socket listens (python's start-up: ~1 s).
        var said: String?
        let (process, outputPath) = (self.process, self.outputPath)
        let read = { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
        _ = waitUntil(timeout: 60) {
            said = read().split(separator: "\n").first { $0.hasPrefix("listening on ") }.map { String($0.dropFirst(13)) }
            return said != nil || !process.isRunning
        }
        guard let said else {
            LoopbackServerProcess.stop(process, root: root)
            throw NSError(domain: "TusServer", code: 1, userInfo: [NSLocalizedDescriptionKey: "scripts/tus-server did not start: \(read())"])
        }
        endpoint = said
    }

    func stop() { LoopbackServerProcess.stop(process, root: root) }

    /// What the server printed (its errors; the checksum layer's checks).
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Every upload the server holds, oldest first.
    var uploads: [Upload] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: storage)) ?? []
        return names.filter { $0.hasSuffix(".info") }.compactMap { name -> (Date, Upload)? in
            let id = String(name.dropLast(5))
            guard let infoData = FileManager.default.contents(atPath: storage + "/" + name),
                  let info = try? JSONSerialization.jsonObject(with: infoData) as? [String: Any]
            else { return nil }
            let attributes = try? FileManager.default.attributesOfItem(atPath: storage + "/" + id)
            let created = attributes?[.creationDate] as? Date ?? attributes?[.modificationDate] as? Date ?? .distantPast
            return (created, Upload(id: id, data: FileManager.default.contents(atPath: storage + "/" + id) ?? Data(), info: info))
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// The uploads whose every byte arrived.
    var completeUploads: [Upload] { uploads.filter { $0.size >= 0 && $0.offset == $0.size } }

    /// Forgets an upload as a server that lost it would: HEAD and PATCH then answer 404.
    func lose(_ id: String) throws {
        try FileManager.default.removeItem(atPath: storage + "/" + id + ".info")
        try? FileManager.default.removeItem(atPath: storage + "/" + id)
    }
}
