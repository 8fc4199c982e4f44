import ArgumentKit
import Foundation
import SpoolCore
import SpoolStore
import SpoolSystem

/// `spoold ls [STATE]`: one line per item: id, state, attempts, size, age, last error, name.
///
/// The original name comes from the json `ls` reads anyway for the last error (or, for a direct
/// upload's lone blob, from its name attribute): the id keeps only a hint of it, ASCII letters and
/// digits, so `Grüße.txt` and `日本語.txt` would otherwise be told apart by `show` alone.
struct ListCommand: SpooldCommand {
    static let spec = CommandSpec(
        name: "ls",
        abstract: "One line per item: id, state, attempts, size, age, last error, original name.",
        options: [CommonOptions.existingSpool, CommonOptions.json],
        positionals: [PositionalSpec(
            "STATE", help: "pending, inflight, failed or done (default: all but done).", optional: true,
            completion: .choices(ItemState.allCases.map(\.rawValue)))])

    var spoolPath: String
    var states: [ItemState]
    var json: Bool

    init(_ arguments: ParsedArguments, context: CommandContext) throws {
        spoolPath = CommonOptions.spoolPath(arguments, context)
        json = arguments.flag("json")
        if let text = arguments.positionals.first {
            guard let state = ItemState(rawValue: text) else {
                throw ArgumentError("unknown state '\(text)' (expected pending, inflight, failed or done)", command: "ls")
            }
            states = [state]
        } else {
            states = [.pending, .inflight, .failed]
        }
    }

    func run(context: CommandContext) throws -> ExitCode {
        let spool = try CommonOptions.openExisting(spoolPath)
        let inventory = try SpoolInventory.load(spool, states: states)
        let logged = spool.partLogs.loggedItems()
        let now = context.clock.now()
        var rows: [[String: Any]] = []
        var lines: [[String]] = [["ID", "STATE", "ATTEMPTS", "SIZE", "AGE", "LAST ERROR", "NAME"]]
        for item in inventory.items {
            let metadata = item.hasJSON ? try? spool.readMetadata(item.id, at: item.location) : nil
            // A lone blob naming its source: a direct upload under way (or cut by a crash).
            let directName = item.hasJSON ? nil : spool.directSourceName(
                of: ItemFileName(id: item.id, attempt: item.location.attempt, kind: .blob), at: item.location).map(FileName.decode)
            let lastError: String
            if let directName { lastError = "sent directly from incoming/\(FileName.display(directName)) (no json yet)" }
            else if !item.hasJSON { lastError = "metadata missing" }
            else if let metadata {
                lastError = metadata.failureReason ?? metadata.lastAttempt.map { a in
                    a.outcome == "success" ? "" : (a.httpStatus.map { "HTTP \($0)" } ?? a.error ?? a.outcome)
                } ?? ""
            } else { lastError = "unreadable metadata" }
            // A multipart upload in progress: the parts its log holds.
            let progress = logged.contains(item.id) ? spool.partLogs.state(of: item.id) : nil
            let age = item.id.createdAt.map { $0.seconds(until: now) } ?? 0
            let size = item.blobSize ?? metadata?.size ?? 0
            let name = metadata?.originalName ?? directName.map(FileName.display)
            if json {
                var row: [String: Any] = [
                    "id": item.id.rawValue, "state": item.location.state.rawValue, "attempts": item.location.attempt,
                    "size": size, "ageSeconds": Int(age), "lastError": lastError,
                ]
                if let name { row["originalName"] = name }
                if let progress {
                    row["partsDone"] = progress.parts.count
                    row["partsTotal"] = progress.plan.partCount
                }
                if item.location.state == .pending, let due = item.jsonModified { row["nextDue"] = due.iso8601 }
                rows.append(row)
            } else {
                lines.append([item.id.rawValue, item.location.state.rawValue, "\(item.location.attempt)", Output.bytes(size),
                              Output.age(age),
                              oneLine(progress.map { "parts \($0.parts.count)/\($0.plan.partCount)" + (lastError.isEmpty ? "" : "; " + lastError) }
                                      ?? lastError, max: 80),
                              // Last, so a name of wide characters shifts no other column; escaped,
                              // so a name with a newline or an escape sequence stays on its line.
                              name.map(LogEscaping.line) ?? ""])
            }
        }
        if json {
            // `[]` for none: Foundation would pretty-print an empty array over three lines.
            let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys])
            context.print(rows.isEmpty ? "[]" : String(decoding: data, as: UTF8.self))
        } else if lines.count > 1 {
            context.print(Table.render(lines))
        } else {
            // Silence would look like a failure; say what was looked at.
            context.print("no items in " + states.map { "\($0.rawValue)/" }.joined(separator: ", "))
        }
        return .success
    }
}

func oneLine(_ text: String, max: Int) -> String {
    let flat = text.map { $0 == "\n" || $0 == "\r" || $0 == "\t" ? " " : $0 }
    return flat.count <= max ? String(flat) : String(flat.prefix(max - 1)) + "…"
}

/// Left-aligned columns separated by two spaces; the last column is not padded.
enum Table {
    static func render(_ rows: [[String]]) -> String {
        guard let columns = rows.first?.count else { return "" }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = Swift.max(widths[i], cell.count) } }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == columns - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
