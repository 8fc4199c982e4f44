import ArgumentKit
import Foundation
import SpoolCore
import SpoolStore

/// `spoold status`: counts and bytes per state, oldest age, next due, whether a daemon runs,
/// pending items by age and failed items by reason class, the disk the queue takes and the
/// daemon's limits.
///
/// At any size: a running daemon's queue comes from its `SPOOL/counts` (no folder read); without
/// one, each folder is read name by name, its bytes stat'ed for up to 4,096 items and
/// estimated from a sample beyond (`SpoolSummary`).
struct StatusCommand: SpooldCommand {
    static let spec = CommandSpec(
        name: "status",
        abstract: "Counts and bytes per state, oldest item, next retry, whether a daemon runs.",
        discussion: """
        Also pending items by age in doubling buckets (0-1 min, 1-2, 2-4 ..., like Postfix's
        qshape; the age is the item's creation time, from its id) and failed items by reason
        class (http 4xx, http 5xx, http other, network, refused, interrupted, sidecar, blob
        missing, blob changed, metadata, other). --json has them as "pendingByAge" and
        "failedByReason". "full" says whether a daemon's --max-spool-size is reached.
        "aborts" counts the S3 multipart uploads spoold gave up and still has to abort, and the
        tus uploads it still has to terminate (SPOOL/parts/aborts.log), with the oldest; a daemon
        sends them, again and again while the server does not confirm, and again at each start.
        "requests" whether the endpoint throttles the daemon, and the request rate it allows.
        "window" whether the daemon holds its uploads outside its --upload-window windows, and
        until when: "paused until 22:00" on the daemon's local clock.
        "queue" is what the queue (pending and in flight) holds as --max-spool-size and
        --max-items count it: its items (two files, so two inodes, each) and the disk they
        take (the allocated blocks of both files), with a running daemon's limits. Each state
        also has "diskBytes".
        While a daemon runs, the queue's figures are its own (SPOOL/counts, rewritten at most
        once a second: "counts" says so and when; "counting" while it still counts, once at
        start, what lies beyond its memory); otherwise the folders are read, and where a folder
        holds more than 4,096 items its bytes are estimated from a sample of them ("~" in the
        text, "estimated" in --json). So status answers at once at any size.
        """,
        options: [CommonOptions.existingSpool, CommonOptions.json],
        positionals: [])

    var spoolPath: String
    var json: Bool

    init(_ arguments: ParsedArguments, context: CommandContext) throws {
        spoolPath = CommonOptions.spoolPath(arguments, context)
        json = arguments.flag("json")
    }

    func run(context: CommandContext) throws -> ExitCode {
        let spool = try CommonOptions.openExisting(spoolPath)
        let now = context.clock.now()
        let daemon = SpoolLock.holder(of: spool)
        let summary = try SpoolSummary.load(spool, now: now, daemonPID: daemon.flatMap { Int32($0) })
        let ages = try QueueAges.load(spool)
        var rows: [(state: String, totals: SpoolSummary.StateTotals, oldest: Double?)] = []
        for state in ItemState.allCases {
            let totals = summary.states[state] ?? SpoolSummary.StateTotals()
            let oldest = totals.oldest.flatMap(\.createdAt).map { $0.seconds(until: now) }
            rows.append((state.rawValue, totals, oldest))
        }
        let queued = summary.queued
        let limit = summary.daemonCounts?.limit
        let counting = summary.daemonCounts?.counting ?? false
        let nextDue = summary.nextDue
        // Written by the daemon while the endpoint is unreachable; stale if no daemon holds the lock.
        let outage = daemon == nil ? nil : OutageMarker.read(in: spool)
        let intakePaused = daemon == nil ? nil : IntakeMarker.read(in: spool)
        let full = daemon == nil ? nil : SpoolFullMarker.read(in: spool)
        let owedAborts = spool.partLogs.aborts.owed
        let throttled = daemon == nil ? nil : ThrottleMarker.read(in: spool)
        let held = daemon == nil ? nil : WindowMarker.read(in: spool)

        if json {
            var object: [String: Any] = [
                "spool": spool.path,
                "daemon": daemon.map { ["running": true, "pid": Int($0) ?? 0] as [String: Any] } ?? ["running": false],
                "incoming": ["count": summary.incomingFiles, "bytes": summary.incomingBytes],
            ]
            for row in rows {
                var entry: [String: Any] = ["count": row.totals.count, "bytes": row.totals.bytes, "diskBytes": row.totals.diskBytes]
                if let oldest = row.oldest { entry["oldestAgeSeconds"] = Int(oldest) }
                if row.totals.estimated { entry["estimated"] = true }
                if row.totals.counting { entry["counting"] = true }
                object[row.state] = entry
            }
            var queue: [String: Any] = [
                "items": queued.items, "inodes": 2 * queued.items, "bytes": queued.payloadBytes, "diskBytes": queued.diskBytes,
            ]
            if let bytes = limit?.bytes { queue["maxSpoolSize"] = bytes }
            if let items = limit?.items { queue["maxItems"] = items }
            if counting { queue["counting"] = true }
            if [ItemState.pending, .inflight].contains(where: { summary.states[$0]?.estimated == true }) { queue["estimated"] = true }
            object["queue"] = queue
            if let counts = summary.daemonCounts {
                object["counts"] = ["from": "daemon", "updated": counts.updated.iso8601]
            } else {
                object["counts"] = ["from": "folders"]
            }
            if let nextDue { object["nextDue"] = nextDue.iso8601 }
            if let intakePaused {
                object["intake"] = ["paused": true, "since": intakePaused.iso8601, "reason": "disk full"] as [String: Any]
            } else {
                object["intake"] = ["paused": false]
            }
            object["pendingByAge"] = summary.pendingByAge.rows.map { row -> [String: Any] in
                let (lower, upper) = QueueAgeShape.bounds(ofBucket: row.bucket)
                var bucket: [String: Any] = ["minMinutes": lower, "count": row.count]
                if let upper { bucket["maxMinutes"] = upper }
                return bucket
            }
            object["failedByReason"] = Dictionary(uniqueKeysWithValues: ages.failed.map { ($0.key.rawValue, $0.value) })
            if let full {
                var entry: [String: Any] = ["full": true, "since": full.since.iso8601, "whenFull": full.whenFull]
                if let bytes = full.limitBytes { entry["limitBytes"] = bytes }
                if let items = full.limitItems { entry["limitItems"] = items }
                object["full"] = entry
            } else {
                object["full"] = ["full": false]
            }
            var aborts: [String: Any] = ["count": owedAborts.count]
            if let oldest = owedAborts.first { aborts["oldestSince"] = oldest.since.iso8601 }
            object["aborts"] = aborts
            if let throttled {
                var requests: [String: Any] = [
                    "throttled": true, "since": throttled.since.iso8601, "ratePerSecond": throttled.ratePerSecond,
                    "reason": throttled.reason, "throttledAnswers": throttled.throttledAnswers, "updated": throttled.updated.iso8601,
                ]
                if let pausedUntil = throttled.pausedUntil, pausedUntil > now { requests["pausedUntil"] = pausedUntil.iso8601 }
                object["requests"] = requests
            } else {
                object["requests"] = ["throttled": false]
            }
            if let outage {
                object["uploads"] = ["paused": true, "since": outage.since.iso8601, "reason": outage.reason] as [String: Any]
            } else {
                object["uploads"] = ["paused": false]
            }
            if let held {
                object["window"] = [
                    "held": true, "since": held.since.iso8601, "until": held.until.iso8601, "untilLocal": held.untilLocal,
                    "windows": held.windows,
                ] as [String: Any]
            } else {
                object["window"] = ["held": false]
            }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            context.print(String(decoding: data, as: UTF8.self))
            return .success
        }

        context.print("spool    \(spool.path)")
        context.print("daemon   " + (daemon.map { "running (pid \($0))" } ?? "not running"))
        if let held {
            context.print(
                "uploads  paused until \(held.untilLocal) (\(held.until.iso8601), in \(Output.age(now.seconds(until: held.until)))): "
                    + "outside --upload-window \(held.windows); files are still taken in")
        }
        if let outage {
            context.print("uploads  paused since \(outage.since.iso8601) (\(Output.age(outage.since.seconds(until: now))) ago): \(outage.reason); probing")
        }
        if let throttled {
            let pause = throttled.pausedUntil.flatMap { $0 > now ? "; every request waits until \($0.iso8601) (Retry-After)" : nil } ?? ""
            context.print(
                "requests throttled since \(throttled.since.iso8601) (\(Output.age(throttled.since.seconds(until: now))) ago): "
                    + "at most \(throttled.ratePerSecond) a second (\(throttled.reason); \(throttled.throttledAnswers) throttled answers)"
                    + "\(pause); throttled attempts are not counted")
        }
        if let intakePaused {
            context.print("intake   paused since \(intakePaused.iso8601) (\(Output.age(intakePaused.seconds(until: now))) ago): the spool's file system is full; files wait in incoming/, uploads go on")
        }
        if let full {
            let what = full.whenFull == "drop-oldest" ? "the oldest pending items are dropped to make room" : "new files wait in incoming/"
            let limits = [full.limitBytes.map { "--max-spool-size \(Output.bytes($0))" }, full.limitItems.map { "--max-items \($0)" }]
                .compactMap { $0 }.joined(separator: " or ")
            context.print("full     since \(full.since.iso8601): \(limits) reached; \(what)")
        }
        context.print("incoming \(summary.incomingFiles) file(s), \(Output.bytes(summary.incomingBytes))")
        for row in rows where row.totals.count > 0 || row.state != "done" {
            let oldest = row.oldest.map { ", oldest \(Output.age($0))" } ?? ""
            let about = row.totals.estimated ? "~" : ""
            let bytes = row.totals.counting
                ? "bytes still being counted by the daemon"
                : "\(about)\(Output.bytes(row.totals.bytes)), \(about)\(Output.bytes(row.totals.diskBytes)) on disk"
            context.print("\(row.state.padding(toLength: 8, withPad: " ", startingAt: 0)) \(row.totals.count) item(s), \(bytes)\(oldest)")
        }
        context.print("queue    " + Self.queueLine(queued, limit: limit, counting: counting,
                                                    estimated: summary.states[.pending]?.estimated == true || summary.states[.inflight]?.estimated == true))
        if let counts = summary.daemonCounts {
            context.print("counts   the daemon's, \(Output.age(counts.updated.seconds(until: now))) ago (pending/ and inflight/ are not read while it runs)")
        } else if rows.contains(where: { $0.totals.estimated }) {
            context.print("counts   from the folders; ~: bytes estimated from a sample (a folder of more than \(SpoolSummary.defaultSampleBudget) items)")
        }
        if let nextDue {
            let wait = now.seconds(until: nextDue)
            context.print("next due " + (wait <= 0 ? "now" : "in \(Output.age(wait)) (\(nextDue.iso8601))"))
        }
        if !summary.pendingByAge.rows.isEmpty {
            context.print("pending by age:")
            for row in summary.pendingByAge.rows {
                context.print("  \(QueueAgeShape.label(ofBucket: row.bucket).padding(toLength: 14, withPad: " ", startingAt: 0)) \(row.count)")
            }
        }
        if !ages.failed.isEmpty {
            context.print("failed by reason:")
            for (reasonClass, count) in ages.failed.sorted(by: { $0.key < $1.key }) {
                context.print("  \(reasonClass.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0)) \(count)")
            }
        }
        if let oldest = owedAborts.first {
            context.print(
                "aborts   \(owedAborts.count) \(StatusCommand.owedKinds(owedAborts)) given up and still to abort (parts/\(AbortLog.fileName)), oldest since \(oldest.since.iso8601); "
                    + (daemon == nil ? "the next daemon start sends them" : "the daemon sends them until the server confirms"))
        }
        if !summary.strays.isEmpty {
            context.print("strays   \(summary.strayCount) file(s) that are not items, e.g. \(summary.strays[0])")
        }
        return .success
    }

    /// `1000016 item(s) (2000032 inodes), 7.6 GiB on disk; --max-spool-size 10 GiB (76%), --max-items 2000000 (50%)`.
    static func queueLine(_ queued: QueueUsage, limit: SpoolSizeLimit?, counting: Bool, estimated: Bool) -> String {
        var line = "\(queued.items) item(s) (\(2 * queued.items) inodes), "
            + (counting ? "disk still being counted" : "\(estimated ? "~" : "")\(Output.bytes(queued.diskBytes)) on disk")
        var limits: [String] = []
        if let bytes = limit?.bytes {
            limits.append("--max-spool-size \(Output.bytes(bytes))" + (counting ? "" : " (\(queued.diskBytes * 100 / max(1, bytes))%)"))
        }
        if let items = limit?.items { limits.append("--max-items \(items) (\(queued.items * 100 / max(1, items))%)") }
        if !limits.isEmpty { line += "; the daemon's " + limits.joined(separator: ", ") }
        return line
    }

    /// What the owed requests end: `S3 multipart upload(s)`, `tus upload(s)`, or both.
    static func owedKinds(_ owed: [OwedAbort]) -> String {
        let kinds = Set(owed.map(\.kind))
        if kinds == [.tusTermination] { return "tus upload(s)" }
        if kinds == [.s3Multipart] { return "S3 multipart upload(s)" }
        return "S3 multipart and tus upload(s)"
    }
}
