import Foundation
import XCTest

/// A real HTTPS server on 127.0.0.1 that requires a client certificate (Python's `ssl`,
/// `CERT_REQUIRED`, TLS 1.3 by default as most servers now speak it): it refuses a handshake
/// without a certificate its CA issued with a fatal alert, and stores each PUT body that comes
/// through as `www/<last path segment>`. Its certificates are made per test with the openssl CLI
/// (`Material`). Skips, saying so, without python3 or openssl.
final class MutualTLSServer {
    /// The files of one test: a CA, the server's certificate for 127.0.0.1 and a client
    /// certificate it issued, and a client certificate no CA the server trusts issued.
    struct Material {
        var folder: String
        var ca: String { folder + "/ca.pem" }
        var serverCertificate: String { folder + "/server.pem" }
        var serverKey: String { folder + "/server.key" }
        var clientCertificate: String { folder + "/client.pem" }
        var clientKey: String { folder + "/client.key" }
        var strangerCertificate: String { folder + "/stranger.pem" }
        var strangerKey: String { folder + "/stranger.key" }
    }

    let root: String
    let port: Int
    private let process = Process()

    static let python = "/usr/bin/python3"

    /// Makes the certificates (EC P-256 keys: instant) in a folder removed after the test.
    static func material(for test: XCTestCase) throws -> Material {
        guard FileManager.default.isExecutableFile(atPath: python) else { throw XCTSkip("\(python) is not installed") }
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("the openssl command is not installed")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-mtls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        let material = Material(folder: folder)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"]
        func run(_ arguments: [String]) throws {
            let make = Process()
            make.executableURL = URL(fileURLWithPath: openssl)
            make.arguments = arguments
            make.currentDirectoryURL = URL(fileURLWithPath: folder)
            make.standardOutput = FileHandle.nullDevice
            make.standardError = FileHandle.nullDevice
            try make.run()
            make.waitUntilExit()
            XCTAssertEqual(make.terminationStatus, 0, "openssl " + arguments.joined(separator: " "))
        }
        try run(["req", "-x509"] + key + ["-subj", "/CN=spoold test CA", "-keyout", "ca.key", "-out", "ca.pem"])
        try run(["req"] + key + ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", "server.key", "-out", "server.csr"])
        try run(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
                 "-copy_extensions", "copy", "-out", "server.pem"])
        try run(["req"] + key + ["-subj", "/CN=spoold client", "-keyout", "client.key", "-out", "client.csr"])
        try run(["x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-out", "client.pem"])
        try run(["req", "-x509"] + key + ["-subj", "/CN=stranger", "-keyout", "stranger.key", "-out", "stranger.pem"])
        return material
    }

    init(_ material: Material) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-mtls-server-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/www", withIntermediateDirectories: true)
        port = try NginxServer.freePort()
        let script = """
            import http.server, os, ssl, sys
            port, certificate, key, ca, www = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
            class Handler(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def do_PUT(self):
                    body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                    with open(os.path.join(www, os.path.basename(self.path)), "wb") as f:
                        f.write(body)
                    self.send_response(201)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                def log_message(self, *args):
                    pass
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certificate, key)
            context.load_verify_locations(ca)
            context.verify_mode = ssl.CERT_REQUIRED
            server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
            server.socket = context.wrap_socket(server.socket, server_side=True)
            server.serve_forever()
            """
        process.executableURL = URL(fileURLWithPath: MutualTLSServer.python)
        process.arguments = ["-c", script, String(port), material.serverCertificate, material.serverKey, material.ca, root + "/www"]
        try LoopbackServerProcess.start(process, port: port, attempts: 200, name: "python mTLS server") { "" }
    }

    func stop() { LoopbackServerProcess.stop(process, root: root) }

    /// The body stored for `name`, if one came through.
    func stored(_ name: String) -> [UInt8]? {
        (try? Data(contentsOf: URL(fileURLWithPath: root + "/www/" + name))).map(Array.init)
    }
}
