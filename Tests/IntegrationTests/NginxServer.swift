import Foundation
import XCTest

/// A real nginx on 127.0.0.1 with a WebDAV location that stores PUT bodies, for byte-exact checks
/// against a server we did not write. Installed by scripts/test; the test skips (saying so) without it.
final class NginxServer {
    let root: String
    let port: Int
    private let process = Process()

    static var binary: String? {
        ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// - Parameters:
    ///   - tls: a certificate and key file (PEM): nginx then speaks HTTPS only.
    ///   - http2: with `tls`, also offer HTTP/2 (ALPN).
    ///   - proxyTo: a port on 127.0.0.1 to pass every request to (an S3 store behind nginx's
    ///     HTTP/2), with the client's Host, instead of the locations below.
    init(binary: String, tls: (certificate: String, key: String)? = nil, http2: Bool = false, proxyTo: Int? = nil) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-nginx-\(UUID().uuidString)").path
        for sub in ["www/up", "body", "logs"] {
            try FileManager.default.createDirectory(atPath: root + "/" + sub, withIntermediateDirectories: true)
        }
        chmod(root, 0o777)
        for sub in ["www", "www/up", "body", "logs"] { chmod(root + "/" + sub, 0o777) }
        port = try NginxServer.freePort()
        let user = getuid() == 0 ? "user root root;" : ""
        let config = """
        \(user)
        worker_processes 1;
        pid \(root)/nginx.pid;
        error_log \(root)/logs/error.log warn;
        events { worker_connections 256; }
        http {
            log_format requests '$server_protocol $connection $status $request_method $uri';
            access_log \(root)/logs/access.log requests;
            client_body_temp_path \(root)/body;
            server {
                listen 127.0.0.1:\(port)\(tls == nil ? "" : " ssl")\(tls != nil && http2 ? " http2" : "");
                \(tls.map { "ssl_certificate \($0.certificate); ssl_certificate_key \($0.key);" } ?? "")
                \(proxyTo.map { """
                    location / {
                        client_max_body_size 0; proxy_http_version 1.1; proxy_request_buffering off;
                        proxy_set_header Host $host:$server_port; proxy_pass http://127.0.0.1:\($0);
                    }
                    """ } ?? "")
                location /up/ {
                    root \(root)/www;
                    dav_methods PUT;
                    create_full_put_path on;
                    client_max_body_size 0;
                }
                # Answers before reading the body, as some servers do.
                location /early/ {
                    client_max_body_size 0;
                    return 201;
                }
                # Fault answers (`CurlHTTP2FaultTests`): busy with a Retry-After, a final refusal,
                # a redirect to /up/ on the same origin, and a connection closed with no answer.
                location /busy/ { client_max_body_size 0; add_header Retry-After 7 always; return 503; }
                location /refuse/ { client_max_body_size 0; return 413; }
                location ~ ^/moved/(.*)$ { client_max_body_size 0; return 307 $scheme://127.0.0.1:\(port)/up/$1; }
                location /drop/ { client_max_body_size 0; return 444; }
            }
        }
        """
        try config.write(toFile: root + "/nginx.conf", atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-p", root, "-c", root + "/nginx.conf", "-g", "daemon off;"]
        try LoopbackServerProcess.start(process, port: port, attempts: 200, name: "nginx") { errorLog }
    }

    func stop() { LoopbackServerProcess.stop(process, root: root) }

    /// nginx, and a self-signed certificate for 127.0.0.1 made with the openssl CLI (its own CA:
    /// pass it with `--cacert`), removed after the test. Skips, saying so, without either program.
    static func tlsMaterial(for test: XCTestCase) throws -> (binary: String, certificate: String, key: String) {
        guard let binary = NginxServer.binary else {
            throw XCTSkip("nginx is not installed (scripts/test installs it from Debian packages)")
        }
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("the openssl command is not installed")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        let (certificate, key) = (folder + "/cert.pem", folder + "/key.pem")
        let make = Process()
        make.executableURL = URL(fileURLWithPath: openssl)
        // An EC P-256 key: made at once, where an RSA 2048 one took 0.1-0.5 s of a core per test.
        make.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                          "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate]
        make.standardOutput = FileHandle.nullDevice
        make.standardError = FileHandle.nullDevice
        try make.run()
        make.waitUntilExit()
        XCTAssertEqual(make.terminationStatus, 0, "openssl req")
        return (binary, certificate, key)
    }

    var errorLog: String { (try? String(contentsOfFile: root + "/logs/error.log", encoding: .utf8)) ?? "" }

    /// The requests answered so far: the protocol (`HTTP/1.1`, `HTTP/2.0`) and nginx's serial
    /// number of the connection each came on.
    var requests: [(protocol: String, connection: String)] {
        let text = (try? String(contentsOfFile: root + "/logs/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map {
            let fields = $0.split(separator: " ")
            return (String(fields.first ?? ""), fields.count > 1 ? String(fields[1]) : "")
        }
    }

    /// Every request nginx logged: its status and path (the access log's last two fields).
    var answered: [(status: Int, path: String)] {
        let text = (try? String(contentsOfFile: root + "/logs/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map {
            let fields = $0.split(separator: " ")
            return (fields.count > 2 ? Int(fields[2]) ?? 0 : 0, fields.last.map(String.init) ?? "")
        }
    }

    /// nginx has no readiness event we can wait on, so try to connect, a bounded number of times.
    static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw NSError(domain: "nginx", code: 2) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

final class NginxTests: XCTestCase {
    func testDrain_toRealNginx_storesEveryBodyByteForByte() throws {
        guard let binary = NginxServer.binary else {
            throw XCTSkip("nginx is not installed (scripts/test installs it from Debian packages)")
        }
        let nginx = try NginxServer(binary: binary)
        addTeardownBlock { nginx.stop() }
        let spool = try TestSpool(self)
        let files: [(String, [UInt8])] = [
            ("zero.bin", []), ("small file.txt", payload(17, seed: 11)), ("ünïcode;%.dat", payload(200_000, seed: 12)),
            ("large.bin", payload(3 << 20, seed: 13)),
        ]
        for (name, bytes) in files { try spool.drop(name, bytes) }

        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:\(nginx.port)/up/", "--settle", "0"])

        XCTAssertEqual(result.exitCode, 0, result.stderr + nginx.errorLog)
        for (name, bytes) in files {
            let stored = try Data(contentsOf: URL(fileURLWithPath: nginx.root + "/www/up/" + name))
            XCTAssertEqual(stored.count, bytes.count, name)
            XCTAssertTrue(stored == Data(bytes), "\(name) differs on nginx's disk")
        }
        XCTAssertEqual(spool.itemFiles, [])
    }
}
