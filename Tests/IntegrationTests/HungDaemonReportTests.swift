import Foundation
import XCTest

/// What a test failure says about a hung daemon's threads: the stacks, or why there are none.
final class HungDaemonReportTests: XCTestCase {
    func testWithoutGdb_saysSo_insteadOfAnEmptySection() {
        let text = SpooldProcess.threadStacks(of: getpid(), gdb: "/nonexistent/gdb")
        XCTAssertTrue(text.contains("/nonexistent/gdb is not installed"), text)
        XCTAssertFalse(text.contains("threads of the hung daemon (gdb):"), text)
    }

    func testGdbThatPrintsNoStack_saysWhatGdbSaid() throws {
        let fake = try TestSpool(self).root + "/gdb"
        try "#!/bin/sh\necho 'ptrace: Operation not permitted.' >&2\nexit 1\n".write(toFile: fake, atomically: true, encoding: .utf8)
        chmod(fake, 0o755)
        let text = SpooldProcess.threadStacks(of: getpid(), gdb: fake)
        XCTAssertFalse(text.contains("threads of the hung daemon (gdb):"), "no empty section: \(text)")
        XCTAssertTrue(text.contains("gdb printed none, exit 1"), text)
        XCTAssertTrue(text.contains("ptrace: Operation not permitted."), text)
    }
}
