import Glibc
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import XCTest

/// A fresh spool for each test, opened through a `RecordingFileSystem` (so a writer can be
/// scripted), and the real engine on it under a manual clock (`EmbeddedEngine`).
class EngineTestCase: XCTestCase {
    var temp: TemporarySpool!
    var fs: RecordingFileSystem!
    var clock: ManualClock!

    override func setUpWithError() throws {
        temp = try TemporarySpool()
        _ = try temp.open()
        fs = RecordingFileSystem()
        clock = ManualClock()
    }

    override func tearDown() { temp.cleanUp() }

    /// One upload at a time, `--settle 2`, an endpoint nobody calls (the transport is scripted).
    func configuration(
        settle: Double = 2, concurrency: Int = 1, policy: RetryPolicy = RetryPolicy(), exitWhenIdle: Bool = false,
        maximumRunSeconds: Double? = nil, direct: Bool = true
    ) -> EngineConfiguration {
        var configuration = EngineConfiguration(
            url: URLTemplate("http://127.0.0.1:9/"), concurrency: concurrency, policy: policy, settleSeconds: settle,
            exitWhenIdle: exitWhenIdle, maximumRunSeconds: maximumRunSeconds)
        // Off for tests of the queue itself: files dropped in are then items first.
        configuration.directUploads = direct
        return configuration
    }

    func start(_ configuration: EngineConfiguration, observers: [any EngineObserver] = []) throws -> EmbeddedEngine {
        try EmbeddedEngine(spool: temp.open(fs: fs), configuration: configuration, clock: clock, observers: observers)
    }

    /// Writes a file into incoming/ whose mtime is `age` seconds before the clock's now (the
    /// settle rule reads mtimes against the engine's clock).
    func drop(_ name: String, age: Double = 60) throws {
        try temp.write(Array("content of \(name)".utf8), to: name, in: .incoming)
        try setModificationTime(of: name, age: age)
    }

    /// Sets the mtime of a file in incoming/ to `age` seconds before the clock's now.
    func setModificationTime(of name: String, age: Double) throws {
        let milliseconds = clock.now().adding(seconds: -age).millisecondsSinceEpoch
        let time = timespec(tv_sec: Int(milliseconds / 1000), tv_nsec: Int(milliseconds % 1000) * 1_000_000)
        var times = [time, time]
        XCTAssertEqual(utimensat(AT_FDCWD, temp.path(.incoming, name), &times, 0), 0)
    }

    /// The attempt numbers of the items in a folder, from their json names.
    func attempts(in folder: SpoolFolder) -> [Int] {
        temp.names(in: folder).compactMap(ItemFileName.init(parsing:)).filter { $0.kind == .json }.map(\.attempt)
    }
}
