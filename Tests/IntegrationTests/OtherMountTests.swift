import Foundation
import UploadReceiver
import XCTest

/// Another mount inside incoming/: its files cannot be renamed into the spool (EXDEV), so they
/// are copied, and the daemon goes on. A bind mount of the spool's own file system keeps its
/// device number, so only the rename tells; it stopped the daemon with exit 3, and
/// `Restart=always` then looped forever. The mounts are made in a mount namespace of the daemon's
/// own (`unshare -m`), so nothing is left mounted whatever happens to the test.
final class OtherMountTests: XCTestCase {
    static let unshare = "/usr/bin/unshare"

    /// Skips unless a private mount namespace with a tmpfs can be made here (root, unshare(1)).
    private func requireMounts() throws {
        guard geteuid() == 0 else { throw XCTSkip("mounting needs root (the tests run as uid \(geteuid()))") }
        guard FileManager.default.isExecutableFile(atPath: Self.unshare) else { throw XCTSkip("\(Self.unshare) is not installed") }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: Self.unshare)
        probe.arguments = ["-m", "/bin/sh", "-c", "mount -t tmpfs tmpfs /mnt"]
        probe.standardError = FileHandle.nullDevice
        try probe.run()
        probe.waitUntilExit()
        if probe.terminationStatus != 0 { throw XCTSkip("unshare -m with a tmpfs mount is not permitted here (exit \(probe.terminationStatus))") }
    }

    /// `drain` run in a new mount namespace after `mount` (a shell command using $SRC and $DST).
    private func drain(_ spool: TestSpool, _ receiver: UploadReceiver, mount: String, source: String, target: String, _ extra: [String])
        throws -> SpooldProcess.Result
    {
        let process = try SpooldProcess(
            ["drain", "--spool", spool.path, "--url", receiver.baseURL + "/up/", "--settle", "0"] + extra,
            environment: ["SRC": source, "DST": target],
            wrapper: [Self.unshare, "-m", "/bin/sh", "-c", mount + #" && exec "$0" "$@""#])
        return try process.wait(timeout: 60)
    }

    func testBindMountOfTheSameFileSystem_itsFilesAreCopied_theDaemonGoesOn() throws {
        try requireMounts()
        for extra in [[], ["--no-direct"]] {
            let receiver = UploadReceiver(script: .always(201))
            try receiver.start()
            defer { receiver.stop() }
            let spool = try TestSpool(self)
            let elsewhere = spool.root + "/elsewhere"  // the same file system as the spool
            try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: spool.incoming + "/bound", withIntermediateDirectories: true)
            try Data("bound one".utf8).write(to: URL(fileURLWithPath: elsewhere + "/one.txt"))
            try Data("bound two".utf8).write(to: URL(fileURLWithPath: elsewhere + "/two.txt"))
            try spool.drop("plain.txt", Array("plain".utf8))

            let result = try drain(spool, receiver, mount: #"mount --bind "$SRC" "$DST""#, source: elsewhere,
                                   target: spool.incoming + "/bound", extra)

            XCTAssertEqual(result.exitCode, 0, "\(extra): \(result.stderr)")
            XCTAssertEqual(Set(receiver.requests.map(\.target)), ["/up/plain.txt", "/up/bound/one.txt", "/up/bound/two.txt"], "\(extra)")
            XCTAssertEqual(Set(receiver.requests.map { String(decoding: $0.body, as: UTF8.self) }), ["plain", "bound one", "bound two"])
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: elsewhere), [], "\(extra): copied, then removed")
            XCTAssertEqual(spool.itemFiles, [], "\(extra)")
        }
    }

    func testOtherFileSystem_itsFilesAreCopied() throws {
        try requireMounts()
        let receiver = UploadReceiver(script: .always(201))
        try receiver.start()
        defer { receiver.stop() }
        let spool = try TestSpool(self)
        let seed = spool.root + "/seed"
        try FileManager.default.createDirectory(atPath: seed, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: spool.incoming + "/tmpfs", withIntermediateDirectories: true)
        try Data("on tmpfs".utf8).write(to: URL(fileURLWithPath: seed + "/t.txt"))

        let result = try drain(spool, receiver, mount: #"mount -t tmpfs tmpfs "$DST" && cp "$SRC/t.txt" "$DST/""#, source: seed,
                               target: spool.incoming + "/tmpfs", [])

        XCTAssertEqual(result.exitCode, 0, result.stderr)
        XCTAssertEqual(receiver.requests.map(\.target), ["/up/tmpfs/t.txt"])
        XCTAssertEqual(receiver.requests.first?.body, Array("on tmpfs".utf8))
    }
}
