import SpoolCore
import XCTest

/// `RecycleTrigger` with a scripted resident size: when memory is read, what the reference is,
/// and when an image recycles.
final class RecycleTriggerTests: XCTestCase {
    /// Runs `requests` one by one, reading `resident(request)`; returns the first reason and the
    /// request counts at which memory was read.
    private func run(
        _ trigger: inout RecycleTrigger, upTo requests: Int, resident: (Int) -> Int?
    ) -> (reason: RecycleTrigger.Reason?, readsAt: [Int]) {
        var reads: [Int] = []
        for request in 1...requests {
            if let reason = trigger.check(requests: request, readResidentKiB: {
                reads.append(request)
                return resident(request)
            }) { return (reason, reads) }
        }
        return (nil, reads)
    }

    func testMemory_referenceIsNotedAfterWarmUp_recyclesOnceGrowthPassesTheLimit() {
        var trigger = RecycleTrigger(maximumRequests: 0, growthLimitKiB: 6144, warmUpRequests: 1000, checkEveryRequests: 100)
        // 40 MiB at warm-up, then 1 KiB more per 10 requests (a leak).
        let (reason, reads) = run(&trigger, upTo: 200_000) { 40_960 + max(0, $0 - 1000) / 10 }

        XCTAssertEqual(trigger.referenceKiB, 40_960, "noted at the end of the warm-up")
        XCTAssertEqual(reads.first, 1000, "nothing is read during the warm-up")
        XCTAssertEqual(reads.dropFirst().first, 1100, "then every 100 requests")
        // 6144 KiB over the reference after 61,440 requests past the warm-up: the first read beyond.
        XCTAssertEqual(reason, .memory(residentKiB: 40_960 + 6150, referenceKiB: 40_960))
        XCTAssertEqual(reads.last, 62_500)
    }

    func testMemory_flat_neverRecycles_andReadsStayRare() {
        var trigger = RecycleTrigger(maximumRequests: 0, growthLimitKiB: 6144, warmUpRequests: 1000, checkEveryRequests: 500)
        let (reason, reads) = run(&trigger, upTo: 100_000) { _ in 40_960 + 6144 }  // at the limit, not above
        XCTAssertNil(reason)
        XCTAssertEqual(reads.count, 199, "one read per 500 requests after the warm-up")
    }

    func testLaterImage_measuresAgainstTheHandedReference_butNotBeforeItsOwnWarmUp() {
        // A fresh image below the bound at its warm-up: the first image's reference holds.
        var trigger = RecycleTrigger(
            maximumRequests: 0, growthLimitKiB: 6144, referenceKiB: 40_960, warmUpRequests: 1000, checkEveryRequests: 100)
        let (reason, reads) = run(&trigger, upTo: 10_000) { $0 < 2000 ? 44_000 : 48_000 }
        XCTAssertEqual(reads.prefix(2), [1000, 1100], "nothing read before its own warm-up")
        XCTAssertEqual(reason, .memory(residentKiB: 48_000, referenceKiB: 40_960))
        XCTAssertEqual(reads.last, 2000)
        XCTAssertEqual(trigger.referenceKiB, 40_960, "the reference of the first image is kept")
    }

    func testLaterImage_alreadyAboveTheBoundAtItsWarmUp_isMeasuredFromItsOwnLevel() {
        // A fresh image that rebuilt a large queue starts above the bound: recycling it again
        // would give another such image, so it recycles only on its own growth.
        var trigger = RecycleTrigger(
            maximumRequests: 0, growthLimitKiB: 6144, referenceKiB: 40_960, warmUpRequests: 1000, checkEveryRequests: 100)
        let (reason, reads) = run(&trigger, upTo: 100_000) { 48_000 + max(0, $0 - 1000) / 10 }
        XCTAssertEqual(trigger.imageReferenceKiB, 48_000)
        XCTAssertEqual(trigger.referenceKiB, 40_960, "handed on to the next image unchanged")
        XCTAssertEqual(reason, .memory(residentKiB: 48_000 + 6150, referenceKiB: 48_000))
        XCTAssertEqual(reads.last, 62_500)
    }

    func testRequestCap_firesWhateverTheMemory_andUnreadableMemoryNeverFires() {
        var capped = RecycleTrigger(maximumRequests: 5000, growthLimitKiB: 6144, warmUpRequests: 1000, checkEveryRequests: 100)
        XCTAssertEqual(run(&capped, upTo: 10_000) { _ in nil }.reason, .requests(5000))
        XCTAssertNil(capped.referenceKiB, "no reading, no reference")

        var memoryOnly = RecycleTrigger(maximumRequests: 0, growthLimitKiB: 6144, warmUpRequests: 1000, checkEveryRequests: 100)
        XCTAssertNil(run(&memoryOnly, upTo: 10_000) { _ in nil }.reason)
    }

    func testDisabled_neverReadsMemory() {
        var trigger = RecycleTrigger(maximumRequests: 0, growthLimitKiB: 0, warmUpRequests: 10, checkEveryRequests: 1)
        XCTAssertFalse(trigger.isEnabled)
        let (reason, reads) = run(&trigger, upTo: 1000) { _ in 1 << 30 }
        XCTAssertNil(reason)
        XCTAssertEqual(reads, [])
    }
}
