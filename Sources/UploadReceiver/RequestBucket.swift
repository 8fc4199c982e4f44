import Dispatch
import Synchronization

/// A token bucket of requests, shared by the copies of one script: `perSecond` tokens a second,
/// at most `burst` saved up; a request that finds a token takes it (`ResponseScript.throttling`).
final class RequestBucket: Sendable {
    private let perSecond: Double
    private let burst: Double
    /// Tokens, and when they were last counted (monotonic nanoseconds).
    private let state: Mutex<(tokens: Double, at: UInt64)>

    init(perSecond: Int, burst: Int) {
        self.perSecond = Double(max(1, perSecond))
        self.burst = Double(max(1, burst))
        state = Mutex((Double(max(1, burst)), DispatchTime.now().uptimeNanoseconds))
    }

    /// Whether a request arriving now is within the rate (and takes its token).
    func take() -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        return state.withLock { state in
            if now > state.at {
                state.tokens = min(burst, state.tokens + Double(now - state.at) / 1e9 * perSecond)
                state.at = now
            }
            guard state.tokens >= 1 else { return false }
            state.tokens -= 1
            return true
        }
    }
}
