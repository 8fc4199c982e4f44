import ArgumentKit
import Foundation
import SpoolCore
import SpoolStore

/// `spoold status`: counts and bytes per state, oldest age, next due, whether a daemon runs.
struct StatusCommand: SpooldCommand {
    static let spec = CommandSpec(
        name: "status",
        abstract: "Counts and bytes per state, oldest item, next retry, whether a daemon runs.",
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
            if let outage {
                object["uploads"] = ["paused": true, "since": outage.since.iso8601, "reason": outage.reason] as [String: Any]
            } else {
                object["uploads"] = ["paused": false]
            }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            context.print(String(decoding: data, as: UTF8.self))
            return .success
        }

        context.print("spool    \(spool.path)")
        context.print("daemon   " + (daemon.map { "running (pid \($0))" } ?? "not running"))
        if let outage {
            context.print("uploads  paused since \(outage.since.iso8601) (\(Output.age(outage.since.seconds(until: now))) ago): \(outage.reason); probing")
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
        if !summary.strays.isEmpty {
            context.print("strays   \(summary.strays.count) file(s) that are not items, e.g. \(summary.strays[0])")
        }
        return .success
    }
}
