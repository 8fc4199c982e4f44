import Foundation
import Glibc
import UploadReceiver
import XCTest

/// `NOTIFY_SOCKET`: a fake service manager (a bound datagram socket) receives what spoold says.
final class SystemdNotifyTests: XCTestCase {
    func testRun_sendsReadyStatusWatchdogAndStopping() throws {
        let receiver = UploadReceiver(script: .always(201))
        _ = try receiver.start()
        addTeardownBlock { receiver.stop() }
        let spool = try TestSpool(self)
        let socketPath = spool.root + "/notify.sock"
        let listener = try NotifyListener(name: socketPath)
        let run = try SpooldProcess(
            ["run", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"],
            environment: ["NOTIFY_SOCKET": socketPath, "WATCHDOG_USEC": "200000"])
        addTeardownBlock { run.signal(SIGKILL) }

        let ready = try XCTUnwrap(listener.next(timeout: 20), run.readErr())
        XCTAssertTrue(ready.contains("READY=1"), ready)
        XCTAssertTrue(ready.contains("STATUS=0 pending, 0 uploading; 0 uploaded"), ready)

        // Watchdog pings at half of 200 ms while the loop idles: several, none much closer than 100 ms.
        var pings: [Date] = []
        let started = Date()
        while Date().timeIntervalSince(started) < 1.0, let message = listener.next(timeout: 2) {
            if message == "WATCHDOG=1" { pings.append(Date()) }
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(pings.count, 5, "about one ping per 100 ms")
        XCTAssertLessThanOrEqual(Double(pings.count), elapsed / 0.1 + 2, "no more often than half the watchdog timeout")

        // Three files make the queue change several times within a second: STATUS follows it, at
        // most once a second.
        for name in ["a.txt", "b.txt", "c.txt"] { try spool.drop(name, [1, 2, 3]) }
        var statusTimes: [Date] = []
        var sawUploaded = false
        let deadline = Date(timeIntervalSinceNow: 20)
        while !sawUploaded, Date() < deadline, let message = listener.next(timeout: 5) {
            guard message.hasPrefix("STATUS=") else { continue }
            statusTimes.append(Date())
            if message.contains("3 uploaded") { sawUploaded = true }
        }
        XCTAssertTrue(sawUploaded, "STATUS follows the queue")
        for (earlier, later) in zip(statusTimes, statusTimes.dropFirst()) {
            XCTAssertGreaterThan(later.timeIntervalSince(earlier), 0.9, "STATUS at most once a second")
        }

        run.signal(SIGTERM)
        var sawStopping = false
        while let message = listener.next(timeout: 5) {
            if message == "STOPPING=1" { sawStopping = true; break }
        }
        XCTAssertTrue(sawStopping)
        XCTAssertEqual(try run.wait(timeout: 20).exitCode, 0)
    }

    func testDrain_abstractSocket_readyThenStopping_noWatchdogUnlessAsked() throws {
        let spool = try TestSpool(self)
        let name = "@spoold-test-\(UUID().uuidString)"
        let listener = try NotifyListener(name: name)
        let result = try SpooldProcess.run(
            ["drain", "--spool", spool.path, "--url", "http://127.0.0.1:9/up/"], environment: ["NOTIFY_SOCKET": name])
        XCTAssertEqual(result.exitCode, 0, result.stderr)
        var messages: [String] = []
        while let message = listener.next(timeout: 0.5) { messages.append(message) }
        XCTAssertTrue(messages.first?.hasPrefix("READY=1\nSTATUS=") == true, "\(messages)")
        XCTAssertEqual(messages.last, "STOPPING=1")
        XCTAssertFalse(messages.contains { $0.contains("WATCHDOG") }, "\(messages)")
    }
}

/// A bound AF_UNIX datagram socket standing in for systemd's notify socket.
final class NotifyListener {
    private let fd: Int32

    init(name: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(name.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + path.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { close(fd); throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit { close(fd) }

    /// The next datagram, or nil after `timeout` seconds without one.
    func next(timeout: Double) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        return n < 0 ? nil : String(decoding: buffer.prefix(n), as: UTF8.self)
    }
}
