import ArgumentKit
import Foundation
import SpoolCore
import SpoolStore

/// `spoold status`: counts and bytes per state, oldest age, next due, whether a daemon runs,
/// pending items by age and failed items by reason class.
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
        "aborts" counts the S3 multipart uploads spoold gave up and still has to abort
        (SPOOL/parts/aborts.log), with the oldest; a daemon sends them, again and again while
        the store does not confirm, and again at each start.
        "requests" whether the endpoint throttles the daemon, and the request rate it allows.
        "window" whether the daemon holds its uploads outside its --upload-window windows, and
        until when: "paused until 22:00" on the daemon's local clock.
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
        let summary = try SpoolSummary.load(spool)
        let now = context.clock.now()
        let ages = try QueueAges.load(spool, now: now)
        let daemon = SpoolLock.holder(of: spool)
        var rows: [(state: String, count: Int, bytes: Int64, oldest: Double?)] = []
        for state in ItemState.allCases {
            let totals = summary.states[state] ?? SpoolSummary.StateTotals()
            let oldest = totals.oldest.flatMap(\.createdAt).map { $0.seconds(until: now) }
            rows.append((state.rawValue, totals.count, totals.bytes, oldest))
        }
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
                var entry: [String: Any] = ["count": row.count, "bytes": row.bytes]
                if let oldest = row.oldest { entry["oldestAgeSeconds"] = Int(oldest) }
                object[row.state] = entry
            }
            if let nextDue { object["nextDue"] = nextDue.iso8601 }
            if let intakePaused {
                object["intake"] = ["paused": true, "since": intakePaused.iso8601, "reason": "disk full"] as [String: Any]
            } else {
                object["intake"] = ["paused": false]
            }
            object["pendingByAge"] = ages.pending.rows.map { row -> [String: Any] in
                let (lower, upper) = QueueAgeShape.bounds(ofBucket: row.bucket)
                var bucket: [String: Any] = ["minMinutes": lower, "count": row.count]
                if let upper { bucket["maxMinutes"] = upper }
                return bucket
            }
            object["failedByReason"] = Dictionary(uniqueKeysWithValues: ages.failed.map { ($0.key.rawValue, $0.value) })
            if let full {
                object["full"] = [
                    "full": true, "since": full.since.iso8601, "limitBytes": full.limitBytes, "whenFull": full.whenFull,
                ] as [String: Any]
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
            context.print("full     since \(full.since.iso8601): --max-spool-size \(Output.bytes(full.limitBytes)) reached; \(what)")
        }
        context.print("incoming \(summary.incomingFiles) file(s), \(Output.bytes(summary.incomingBytes))")
        for row in rows where row.count > 0 || row.state != "done" {
            let oldest = row.oldest.map { ", oldest \(Output.age($0))" } ?? ""
            context.print("\(row.state.padding(toLength: 8, withPad: " ", startingAt: 0)) \(row.count) item(s), \(Output.bytes(row.bytes))\(oldest)")
        }
        if let nextDue {
            let wait = now.seconds(until: nextDue)
            context.print("next due " + (wait <= 0 ? "now" : "in \(Output.age(wait)) (\(nextDue.iso8601))"))
        }
        if !ages.pending.rows.isEmpty {
            context.print("pending by age:")
            for row in ages.pending.rows {
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
                "aborts   \(owedAborts.count) S3 multipart upload(s) given up and still to abort (parts/\(AbortLog.fileName)), oldest since \(oldest.since.iso8601); "
                    + (daemon == nil ? "the next daemon start sends them" : "the daemon sends them until the store confirms"))
        }
        if !summary.strays.isEmpty {
            context.print("strays   \(summary.strays.count) file(s) that are not items, e.g. \(summary.strays[0])")
        }
        return .success
    }
}
