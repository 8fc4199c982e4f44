import Synchronization

/// How many times each idempotency key has been seen, shared by the copies of one script.
final class PerKeyCounter: Sendable {
    private let seen = Mutex<[String: Int]>([:])

    /// Returns the 0-based count of earlier requests for `key` and counts this one.
    func next(for key: String) -> Int {
        seen.withLock { seen in
            let n = seen[key, default: 0]
            seen[key] = n + 1
            return n
        }
    }
}
