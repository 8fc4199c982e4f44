/// Deterministic test payloads, so byte-for-byte comparisons catch reordering and truncation.
enum TestBytes {
    /// `count` pseudo-random bytes from a fixed linear congruential generator.
    /// Written straight into the array's storage: a debug build's `map` took ~0.3 s per MiB.
    static func pattern(_ count: Int, seed: UInt32 = 12345) -> [UInt8] {
        var state = seed
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for i in 0..<count {
                state = state &* 1_664_525 &+ 1_013_904_223
                buffer[i] = UInt8(truncatingIfNeeded: state &>> 24)
            }
            initialized = count
        }
    }
}
