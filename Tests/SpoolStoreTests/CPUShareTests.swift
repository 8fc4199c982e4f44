import CSpoolShims
import Dispatch
import Foundation
import Glibc
import SpoolSystem
import Synchronization
import XCTest

/// How many cores a split listing may use (`CPUShare`): the cores online, fewer under a CPU
/// affinity, fewer again under a cgroup's CPU quota (rounded up), at least one.
final class CPUShareTests: XCTestCase {
    func testUsable_isTheLeastOfOnlineAffinityAndEachQuota_roundedUp_atLeastOne() {
        XCTAssertEqual(CPUShare.usable(online: 64, allowed: nil, quotas: []), 64)
        XCTAssertEqual(CPUShare.usable(online: 64, allowed: 8, quotas: []), 8, "taskset, CPUAffinity=")
        XCTAssertEqual(CPUShare.usable(online: 64, allowed: 8, quotas: [1.5]), 2, "a quota of 1.5 cores: two threads")
        XCTAssertEqual(CPUShare.usable(online: 64, allowed: nil, quotas: [4, 0.5]), 1, "a quota higher up the tree holds too")
        XCTAssertEqual(CPUShare.usable(online: 0, allowed: 0, quotas: [0]), 1)
    }

    func testCPUMax_andProcSelfCgroup_parse() {
        XCTAssertEqual(CPUShare.quota(cpuMax: "200000 100000\n"), 2)
        XCTAssertEqual(CPUShare.quota(cpuMax: "50000 100000\n"), 0.5)
        XCTAssertNil(CPUShare.quota(cpuMax: "max 100000\n"), "no quota")
        XCTAssertNil(CPUShare.quota(cpuMax: ""))
        XCTAssertNil(CPUShare.quota(cpuMax: "0 100000"))
        XCTAssertEqual(CPUShare.cgroupPath(procSelfCgroup: "0::/system.slice/spoold.service\n"), "/system.slice/spoold.service")
        XCTAssertEqual(CPUShare.cgroupPath(procSelfCgroup: "12:cpu:/x\n0::/\n"), "/", "v2's line among v1's")
        XCTAssertNil(CPUShare.cgroupPath(procSelfCgroup: "12:cpu:/x\n"), "cgroup v1 only")
    }

    /// The quotas are read up the cgroup tree from the process's own cgroup: "max" is none, and
    /// a quota higher up holds as well.
    func testCgroupQuotas_areReadUpTheTree() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/system.slice/spoold.service", withIntermediateDirectories: true)
        try "max 100000\n".write(toFile: root + "/system.slice/spoold.service/cpu.max", atomically: true, encoding: .utf8)
        try "150000 100000\n".write(toFile: root + "/system.slice/cpu.max", atomically: true, encoding: .utf8)
        try "400000 100000\n".write(toFile: root + "/cpu.max", atomically: true, encoding: .utf8)
        let quotas = CPUShare.cgroupQuotas(procSelfCgroup: "0::/system.slice/spoold.service\n", root: root)
        XCTAssertEqual(quotas, [1.5, 4])
        XCTAssertEqual(CPUShare.usable(online: 8, allowed: nil, quotas: quotas), 2)
        XCTAssertEqual(CPUShare.cgroupQuotas(procSelfCgroup: "0::/\n", root: root), [4])
        XCTAssertEqual(CPUShare.cgroupQuotas(procSelfCgroup: "4:memory:/x\n", root: root), [], "cgroup v1 only")
    }

    /// The process's own affinity is read: a thread allowed one CPU counts one core, and
    /// `SplitListing` then lists in one part (a thread of its own, so the test's stay as they are).
    func testAThreadAllowedOneCPU_countsOneCore() throws {
        let allowedHere = spoold_cpus_allowed()
        let seen = Mutex<(kept: Int32, cores: Int, parts: Int)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let kept = spoold_keep_thread_on_cpus(1)
            seen.withLock { $0 = (kept, CPUShare.cores, SplitListing.partsForThisMachine) }
            done.signal()
        }
        thread.start()
        done.wait()
        let result = try XCTUnwrap(seen.withLock { $0 })
        XCTAssertEqual(result.kept, 0)
        XCTAssertEqual(result.cores, 1)
        XCTAssertEqual(result.parts, 1)
        XCTAssertEqual(spoold_cpus_allowed(), allowedHere, "that thread's affinity, not this one's")
    }
}
