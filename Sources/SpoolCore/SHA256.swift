/// SHA-256 (FIPS 180-4), streaming: `update` any number of times, then `finalize`.
///
/// Pure Swift so the core stays free of I/O and dependencies; used for `Content-Digest`
/// (RFC 9530) and by `HMACSHA256`. Whole 64-byte blocks are compressed straight from the
/// caller's buffer; only a partial block is copied, so hashing a large blob in pieces keeps
/// memory flat and allocates nothing per byte.
public struct SHA256: Sendable {
    public static let digestLength = 32
    public static let blockLength = 64

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    )
    /// Bytes of an unfinished block, waiting for the rest.
    private var partial: [UInt8] = []
    private var totalBytes: UInt64 = 0

    public init() {
        partial.reserveCapacity(SHA256.blockLength)
    }

    /// The digest of `bytes` in one call.
    public static func hash<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil {
            let copy = Array(bytes)
            copy.withUnsafeBytes { update($0) }
        }
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        totalBytes &+= UInt64(bytes.count)
        var offset = 0
        if !partial.isEmpty {
            let take = min(SHA256.blockLength - partial.count, bytes.count)
            partial.append(contentsOf: bytes[0..<take])
            offset = take
            guard partial.count == SHA256.blockLength else { return }
            let block = partial
            block.withUnsafeBytes { compress($0.baseAddress!, blocks: 1) }
            partial.removeAll(keepingCapacity: true)
        }
        let whole = (bytes.count - offset) / SHA256.blockLength
        if whole > 0 {
            compress(bytes.baseAddress! + offset, blocks: whole)
            offset += whole * SHA256.blockLength
        }
        if offset < bytes.count { partial.append(contentsOf: bytes[offset...]) }
    }

    /// Pads the message and returns the 32-byte digest. The hasher is spent afterwards.
    public mutating func finalize() -> [UInt8] {
        let bitLength = totalBytes &* 8
        var tail = partial
        tail.append(0x80)
        while tail.count % SHA256.blockLength != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        tail.withUnsafeBytes { compress($0.baseAddress!, blocks: $0.count / SHA256.blockLength) }
        partial.removeAll()
        var digest = [UInt8]()
        digest.reserveCapacity(SHA256.digestLength)
        for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// Compresses `blocks` whole 64-byte blocks starting at `base` into the state.
    private mutating func compress(_ base: UnsafeRawPointer, blocks: Int) {
        var (h0, h1, h2, h3, h4, h5, h6, h7) = state
        SHA256.k.withUnsafeBufferPointer { k in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                for block in 0..<blocks {
                    let p = base + block * SHA256.blockLength
                    for t in 0..<16 {
                        w[t] = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: t * 4, as: UInt32.self))
                    }
                    for t in 16..<64 {
                        let x = w[t - 15], y = w[t - 2]
                        let s0 = x.rotr(7) ^ x.rotr(18) ^ (x &>> 3)
                        let s1 = y.rotr(17) ^ y.rotr(19) ^ (y &>> 10)
                        w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                    }
                    var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                    // Eight rounds per pass with the roles of the variables rotated, so no round
                    // moves all eight words.
                    for t in stride(from: 0, to: 64, by: 8) {
                        SHA256.round(a, b, c, &d, e, f, g, &h, k[t] &+ w[t])
                        SHA256.round(h, a, b, &c, d, e, f, &g, k[t + 1] &+ w[t + 1])
                        SHA256.round(g, h, a, &b, c, d, e, &f, k[t + 2] &+ w[t + 2])
                        SHA256.round(f, g, h, &a, b, c, d, &e, k[t + 3] &+ w[t + 3])
                        SHA256.round(e, f, g, &h, a, b, c, &d, k[t + 4] &+ w[t + 4])
                        SHA256.round(d, e, f, &g, h, a, b, &c, k[t + 5] &+ w[t + 5])
                        SHA256.round(c, d, e, &f, g, h, a, &b, k[t + 6] &+ w[t + 6])
                        SHA256.round(b, c, d, &e, f, g, h, &a, k[t + 7] &+ w[t + 7])
                    }
                    h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
                    h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
                }
            }
        }
        state = (h0, h1, h2, h3, h4, h5, h6, h7)
    }
}

extension SHA256 {
    /// One round (FIPS 180-4 6.2.2 step 3) with `d` and `h` updated in place: the caller rotates
    /// the names instead of moving the words.
    @inline(__always)
    fileprivate static func round(
        _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32, _ e: UInt32, _ f: UInt32, _ g: UInt32,
        _ h: inout UInt32, _ kw: UInt32
    ) {
        let t1 = h &+ (e.rotr(6) ^ e.rotr(11) ^ e.rotr(25)) &+ (g ^ (e & (f ^ g))) &+ kw
        d &+= t1
        h = t1 &+ (a.rotr(2) ^ a.rotr(13) ^ a.rotr(22)) &+ ((a & b) | (c & (a | b)))
    }
}

extension UInt32 {
    /// Masking shifts: the same bits as `>>`/`<<` for 0 < n < 32, without the range checks a debug
    /// build makes on every shift (the tests hash megabytes through this).
    @inline(__always) fileprivate func rotr(_ n: UInt32) -> UInt32 { (self &>> n) | (self &<< (32 &- n)) }
}
