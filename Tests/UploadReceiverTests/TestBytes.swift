/// Deterministic test payloads, so byte-for-byte comparisons catch reordering and truncation.
enum TestBytes {
    /// `count` pseudo-random bytes from a fixed linear congruential generator.
    static func pattern(_ count: Int, seed: UInt32 = 12345) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }
}
