/// CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF.
///
/// The checksum of iSCSI (RFC 3720), ext4 metadata and LevelDB/RocksDB log records. Table-driven,
/// slicing-by-8 over contiguous storage, one byte at a time otherwise.
///
/// Incremental use: pass the previous result as `seed`;
/// `checksum(b, seed: checksum(a)) == checksum(a + b)`. The default seed 0 starts a new checksum.
public enum CRC32C {
    /// The reflected Castagnoli polynomial.
    public static let polynomial: UInt32 = 0x82F6_3B78

    public static func checksum<C: Collection>(_ bytes: C, seed: UInt32 = 0) -> UInt32 where C.Element == UInt8 {
        let fast = bytes.withContiguousStorageIfAvailable { buffer in
            update(~seed, UnsafeRawBufferPointer(buffer))
        }
        if let fast { return ~fast }
        var crc = ~seed
        tables.withUnsafeBufferPointer { t in
            for byte in bytes {
                crc = t[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
            }
        }
        return ~crc
    }

    /// Runs the raw (un-inverted) register `crc` over `bytes`.
    private static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = crc
        let count = bytes.count
        var i = 0
        tables.withUnsafeBufferPointer { t in
            while count - i >= 8 {
                let v = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ UInt64(crc)
                let a = t[0x700 | Int(v & 0xFF)] ^ t[0x600 | Int((v >> 8) & 0xFF)]
                let b = t[0x500 | Int((v >> 16) & 0xFF)] ^ t[0x400 | Int((v >> 24) & 0xFF)]
                let c = t[0x300 | Int((v >> 32) & 0xFF)] ^ t[0x200 | Int((v >> 40) & 0xFF)]
                let d = t[0x100 | Int((v >> 48) & 0xFF)] ^ t[Int(v >> 56)]
                crc = a ^ b ^ c ^ d
                i += 8
            }
            while i < count {
                crc = t[Int((crc ^ UInt32(bytes[i])) & 0xFF)] ^ (crc >> 8)
                i += 1
            }
        }
        return crc
    }

    /// Eight 256-entry tables, flat: entry `k * 256 + n` is the register change for byte `n`
    /// followed by `k` zero bytes. Table 0 is the classic byte-at-a-time table.
    private static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ polynomial : c >> 1 }
            t[n] = c
        }
        for k in 1..<8 {
            for n in 0..<256 {
                let previous = t[(k - 1) * 256 + n]
                t[k * 256 + n] = (previous >> 8) ^ t[Int(previous & 0xFF)]
            }
        }
        return t
    }()
}
