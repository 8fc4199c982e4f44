import Foundation
import SpoolSystem
import SpoolTransport

/// What the body tests share: a blob opened from bytes, and a reader read to its end.
enum BodyFixtures {
    /// A blob of `bytes` (its file already removed; the descriptor keeps it), of size `recorded`
    /// when the item's metadata says another.
    static func blob(_ bytes: [UInt8], recorded: Int64? = nil) throws -> BlobBody {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spoold-body-\(UUID().uuidString)")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return BlobBody(descriptor: FileDescriptor(rawValue: open(file.path, O_RDONLY | O_CLOEXEC)), size: recorded ?? Int64(bytes.count))
    }

    /// Everything `reader` gives, asked for `piece` bytes at a time; nil when a read fails.
    static func readAll(_ reader: BodyReader, piece: Int) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: piece)
        while true {
            let n = buffer.withUnsafeMutableBytes { reader.read(into: $0.baseAddress!, count: piece) }
            if n < 0 { return nil }
            if n == 0 { return out }
            out += buffer[0..<n]
        }
    }
}
