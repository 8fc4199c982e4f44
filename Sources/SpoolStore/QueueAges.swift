import SpoolCore

/// `spoold status`'s queue shape: pending items by age, failed items by reason class.
///
/// Ages come from the pending json names alone (an id starts with its UTC creation time), so
/// no file is opened for them; only the jsons in failed/ are read, for their reason.
public struct QueueAges: Sendable {
    public var pending = QueueAgeShape()
    public var failed: [FailureClass: Int] = [:]

    public static func load(_ spool: Spool, now: Timestamp) throws -> QueueAges {
        var ages = QueueAges()
        for entry in try spool.list(.pending) {
            guard let name = ItemFileName(parsing: entry.name), name.kind == .json else { continue }
            let created = name.id.createdAt ?? now
            ages.pending.add(ageSeconds: created.seconds(until: now))
        }
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
