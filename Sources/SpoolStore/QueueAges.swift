import SpoolCore

/// `spoold status`'s failed items by reason class (the pending items by age come with the
/// counts, `SpoolSummary.pendingByAge`).
///
/// The reason is in each failed item's json, so only failed/'s jsons are read here.
public struct QueueAges: Sendable {
    public var failed: [FailureClass: Int] = [:]

    public static func load(_ spool: Spool) throws -> QueueAges {
        var ages = QueueAges()
        for entry in try spool.list(.failed) {
            guard let name = ItemFileName(parsing: entry.name), name.kind == .json else { continue }
            let reasonClass: FailureClass
            if let metadata = try? spool.readMetadata(named: entry.name, in: .failed) {
                reasonClass = FailureClass.classify(
                    failureCode: metadata.failureCode, failureReason: metadata.failureReason, lastAttempt: metadata.attempts.last)
            } else {
                reasonClass = .metadata  // unreadable or vanished meanwhile: its json is the problem
            }
            ages.failed[reasonClass, default: 0] += 1
        }
        return ages
    }
}
