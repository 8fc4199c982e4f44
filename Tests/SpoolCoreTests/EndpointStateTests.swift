import SpoolCore
import XCTest

/// The outage as one state at a time: reachable, waiting to probe, probing.
final class EndpointStateTests: XCTestCase {
    private let t0 = Timestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    private func end(_ state: inout EndpointState, _ outcomeClass: UploadOutcome.Class, probe: Bool, at seconds: Double)
        -> EndpointState.Change
    {
        state.attemptEnded(outcomeClass, isProbe: probe, reason: "connection refused", now: t0.adding(seconds: seconds), maximumProbeSeconds: 60)
    }

    func testOutage_waitsOneSecond_thenOneProbeAtATime_doublingUpToTheCap() {
        var state = EndpointState.reachable
        guard case .wentDown(let outage) = end(&state, .outage, probe: false, at: 0) else { return XCTFail("went down") }
        XCTAssertEqual(outage.since, t0)
        XCTAssertEqual(state.nextProbe, t0.adding(seconds: 1))
        XCTAssertFalse(state.startProbe(now: t0.adding(seconds: 0.999)), "not before its time")

        var at = 1.0
        var waits: [Double] = []
        for _ in 0..<8 {
            XCTAssertTrue(state.startProbe(now: t0.adding(seconds: at)))
            XCTAssertNil(state.nextProbe, "a probe is out: its answer wakes the engine")
            XCTAssertFalse(state.startProbe(now: t0.adding(seconds: at + 1000)), "one probe at a time")
            XCTAssertEqual(end(&state, .outage, probe: true, at: at), .none)
            let next = t0.seconds(until: state.nextProbe!)
            waits.append(next - at)
            at = next
        }
        XCTAssertEqual(waits, [2, 4, 8, 16, 32, 60, 60, 60])
    }

    func testUploadStartedBeforeTheOutage_changesNothing_andAnyAnswerEndsIt() {
        var state = EndpointState.reachable
        _ = end(&state, .outage, probe: false, at: 0)
        XCTAssertEqual(end(&state, .outage, probe: false, at: 0.5), .none)
        XCTAssertEqual(state.nextProbe, t0.adding(seconds: 1), "the wait is the probe's to change")
        XCTAssertEqual(end(&state, .retryable, probe: false, at: 0.7), .cameBack(since: t0), "an answer, even a 503")
        XCTAssertEqual(state, .reachable)
        XCTAssertEqual(end(&state, .success, probe: false, at: 1), .none)
    }

    func testProbeNotSent_givesTheSlotBack() {
        var state = EndpointState.reachable
        _ = end(&state, .outage, probe: false, at: 0)
        XCTAssertTrue(state.startProbe(now: t0.adding(seconds: 1)))
        state.probeNotSent()
        XCTAssertTrue(state.startProbe(now: t0.adding(seconds: 1)), "probing goes on")
    }
}
