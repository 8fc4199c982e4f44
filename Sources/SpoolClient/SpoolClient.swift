import Foundation
import SpoolCore
import SpoolStore
import SpoolSystem

/// Hands files to spoold from a Swift program, without running `spoold enqueue`: `enqueue` adds
/// them as items exactly as the command does (it is the command's own code path), and `status`
/// reads the spool. The daemon stays the only uploader; run it on the same spool.
///
/// An item is durable before `enqueue` returns its id: its blob and json are synced in the
/// spool's `tmp/`, its index record is synced, and the pair is renamed into `pending/` with the
/// folders synced. Safe from several processes and threads at once, and while a daemon starts.
public struct SpoolClient: Sendable {
    public let spoolPath: String
    private let clock: @Sendable () -> Timestamp

    /// - Parameter path: the spool directory, as `--spool` takes it. `enqueue` creates its
    ///   layout on first use, as `spoold enqueue` does; `status` never creates one.
    public init(spool path: String) {
        self.init(spool: path, clock: { Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970) })
    }

    /// With another clock (the CLI's, which tests can set).
    package init(spool path: String, clock: @escaping @Sendable () -> Timestamp) {
        spoolPath = path
        self.clock = clock
    }

    /// Adds `files` as items, all in one durable commit, and says what became of each, in order.
    /// A file that cannot be added is skipped and the others are still added; with
    /// `maximumSpoolBytes`, files past the limit are refused. Throws only when nothing was done:
    /// `.invalidArgument` (before touching the spool) or `.spoolUnusable`.
    public func enqueue(_ files: [String], options: EnqueueOptions = EnqueueOptions()) throws(SpoolClientError) -> [EnqueueOutcome] {
        try SpoolClient.validate(options)
        return try SpoolClient.wrappingSpoolErrors {
            let spool = try Spool(path: spoolPath)
            // A daemon starting meanwhile must not take our staged files for orphans.
            spool.sharesStagingWithRecovery = true
            var admitted = files
            var refused: Set<Int> = []
            if let limitBytes = options.maximumSpoolBytes {
                // Counted as the daemon counts it: the disk the queue's items take (a running
                // daemon's own figures when it has them).
                let limit = SpoolSizeLimit(bytes: limitBytes)
                let summary = try SpoolSummary.load(
                    spool, now: clock(), daemonPID: SpoolLock.holder(of: spool).flatMap { Int32($0) })
                var queued = summary.queued
                admitted = []
                for (index, file) in files.enumerated() {
                    guard limit.admits(queued) else { refused.insert(index); continue }
                    queued.diskBytes += SpoolClient.allocatedBytes(of: file) + QueueUsage.jsonDiskEstimate
                    queued.items += 1
                    admitted.append(file)
                }
            }
            var generator = ItemIDGenerator(processTag: UInt64.random(in: 0...UInt64.max))
            let now = clock()
            let items = admitted.map { file in
                let name = file.split(separator: "/").last.map(String.init) ?? file
                let id = generator.next(at: now, originalName: name)
                var metadata = ItemMetadata(
                    id: id, originalName: name, size: 0,
                    contentType: options.contentType ?? ContentType.guess(forFileName: name), createdAt: now,
                    headers: options.headers, fields: options.fields)
                metadata.attempts = []
                return NewItem(source: .external(path: file, move: options.move), metadata: metadata)
            }
            var results = try spool.add(items).makeIterator()
            return files.enumerated().map { index, file in
                if refused.contains(index) { return EnqueueOutcome(file: file, result: .refused) }
                switch results.next() {
                case .added(let id)?: return EnqueueOutcome(file: file, result: .added(id: id.rawValue))
                case .rejected(let reason)?: return EnqueueOutcome(file: file, result: .skipped(reason: reason))
                case nil: preconditionFailure("Spool.add returned fewer results than items")
                }
            }
        }
    }

    /// Adds one file and returns its item's id, or throws why it was not added:
    /// `.fileSkipped`, `.spoolFull`, `.invalidArgument` or `.spoolUnusable`.
    public func enqueue(file: String, options: EnqueueOptions = EnqueueOptions()) throws(SpoolClientError) -> String {
        let outcome = try enqueue([file], options: options)[0]
        switch outcome.result {
        case .added(let id): return id
        case .skipped(let reason): throw .fileSkipped(file: file, reason: reason)
        case .refused: throw .spoolFull(limitBytes: options.maximumSpoolBytes ?? 0)
        }
    }

    /// The spool's counts, bytes and daemon state, as `spoold status` reads them; changes nothing
    /// and creates nothing (a missing spool is `.spoolUnusable`).
    public func status() throws(SpoolClientError) -> SpoolStatus {
        try SpoolClient.wrappingSpoolErrors {
            let spool = try Spool(path: spoolPath, create: false)
            spool.mayReleaseReserve = false
            let daemon = SpoolLock.holder(of: spool).flatMap { Int32($0) }
            let summary = try SpoolSummary.load(spool, now: clock(), daemonPID: daemon)
            func totals(_ state: ItemState) -> SpoolStatus.Totals {
                let found = summary.states[state] ?? SpoolSummary.StateTotals()
                return SpoolStatus.Totals(
                    count: found.count, bytes: found.bytes, oldestCreatedAt: found.oldest?.createdAt.map(SpoolClient.date),
                    diskBytes: found.diskBytes, bytesEstimated: found.estimated || found.counting)
            }
            // The markers say something only while a daemon holds the lock.
            return SpoolStatus(
                pending: totals(.pending), inflight: totals(.inflight), failed: totals(.failed), done: totals(.done),
                incomingFiles: summary.incomingFiles, incomingBytes: summary.incomingBytes,
                nextDue: summary.nextDue.map(SpoolClient.date), daemonPID: daemon,
                uploadsPaused: daemon == nil ? nil : OutageMarker.read(in: spool)?.reason,
                uploadsHeldUntil: daemon == nil ? nil : WindowMarker.read(in: spool).map { SpoolClient.date($0.until) },
                intakePausedSince: daemon == nil ? nil : IntakeMarker.read(in: spool).map(SpoolClient.date),
                fullSince: daemon == nil ? nil : SpoolFullMarker.read(in: spool).map { SpoolClient.date($0.since) })
        }
    }

    /// Headers, fields and the content type are checked where they enter, as the CLI checks its
    /// options (and the daemon checks them again where the request is built).
    static func validate(_ options: EnqueueOptions) throws(SpoolClientError) {
        for (name, value) in options.headers.sorted(by: { $0.key < $1.key }) {
            if let problem = HeaderRule.problem(name: name, value: value) {
                throw .invalidArgument("invalid header \(HeaderRule.printable(name)): \(problem)")
            }
        }
        for key in options.fields.keys where key.isEmpty || key.contains("=") {
            throw .invalidArgument("invalid field name '\(LogEscaping.line(key))': it must be non-empty, without '='")
        }
        if let type = options.contentType, let problem = type.isEmpty ? "it is empty" : HeaderRule.valueProblem(type) {
            throw .invalidArgument("invalid content type: \(problem)")
        }
        if let limit = options.maximumSpoolBytes, limit < 1 {
            throw .invalidArgument("the spool size limit must be at least 1 byte, not \(limit)")
        }
    }

    /// The spool's and the system's errors as `.spoolUnusable`, worded as `spoold` says them.
    static func wrappingSpoolErrors<T>(_ body: () throws -> T) throws(SpoolClientError) -> T {
        do {
            return try body()
        } catch let error as SpoolClientError {
            throw error
        } catch let error as SpoolError {
            if case .outOfSpace = error { throw .spoolUnusable("\(error)", outOfSpace: true) }
            throw .spoolUnusable("\(error)", outOfSpace: false)
        } catch let error as SystemError {
            throw .spoolUnusable(
                "\(error)" + (error.isOutOfSpace ? " (free some space; nothing half-written was acknowledged)" : ""),
                outOfSpace: error.isOutOfSpace)
        } catch {
            throw .spoolUnusable("\(error)", outOfSpace: false)
        }
    }

    /// What a file takes on disk, for the size limit, before it is added (0 when it cannot be
    /// read: `add` then says why). Copied or moved in, its blob takes about as much.
    static func allocatedBytes(of file: String) -> Int64 {
        var status = stat()
        return stat(file, &status) == 0 ? Int64(status.st_blocks) * 512 : 0
    }

    static func date(_ time: Timestamp) -> Date { Date(timeIntervalSince1970: time.secondsSinceEpoch) }
}
