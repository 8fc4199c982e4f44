/// What the queue (pending and in flight) holds, as the limits count it: its items and the disk
/// their files take.
///
/// An item is two files (its blob and its json), so two inodes and, on a file system of 4 KiB
/// blocks, at least 8 KiB of disk however small its payload: a million 16-byte items take about
/// 8 GB. So `--max-spool-size` counts allocated blocks (`st_blocks`), not payload bytes, and
/// `--max-items` bounds the inodes.
public struct QueueUsage: Equatable, Sendable {
    public var items: Int
    /// Payload bytes: the blobs' sizes (what is uploaded).
    public var payloadBytes: Int64
    /// The blocks both files of each item take on disk, in bytes.
    public var diskBytes: Int64

    public init(items: Int = 0, payloadBytes: Int64 = 0, diskBytes: Int64 = 0) {
        (self.items, self.payloadBytes, self.diskBytes) = (items, payloadBytes, diskBytes)
    }

    /// What a json takes before it is written, for a file about to join: one block of the common
    /// 4 KiB file systems (the real figure replaces it once the item is queued).
    public static let jsonDiskEstimate: Int64 = 4096

    public static func + (a: QueueUsage, b: QueueUsage) -> QueueUsage {
        QueueUsage(items: a.items + b.items, payloadBytes: a.payloadBytes + b.payloadBytes, diskBytes: a.diskBytes + b.diskBytes)
    }

    public static func - (a: QueueUsage, b: QueueUsage) -> QueueUsage {
        QueueUsage(items: a.items - b.items, payloadBytes: a.payloadBytes - b.payloadBytes, diskBytes: a.diskBytes - b.diskBytes)
    }

    public static func += (a: inout QueueUsage, b: QueueUsage) { a = a + b }
    public static func -= (a: inout QueueUsage, b: QueueUsage) { a = a - b }

    /// Never below zero in any part (a sum that drifted below what is left).
    public var clamped: QueueUsage { QueueUsage(items: max(0, items), payloadBytes: max(0, payloadBytes), diskBytes: max(0, diskBytes)) }
}
