import ArgumentKit
import Foundation
import SpoolCore
import SpoolStore
import SpoolSystem

/// `spoold ls [STATE]`: one line per item: id, state, attempts, size, age, last error, name.
///
/// Streams: items are read and printed a thousand at a time (`SpoolInventory.forEachBatch`), so
/// the first lines come at once and memory stays the same at any size; each batch is sorted by
/// state and id, and the first one sets the columns.
///
/// The original name comes from the json `ls` reads anyway for the last error (or, for a direct
/// upload's lone blob, from its name attribute): the id keeps only a hint of it, ASCII letters and
/// digits, so `Grüße.txt` and `日本語.txt` would otherwise be told apart by `show` alone.
struct ListCommand: SpooldCommand {
    static let spec = CommandSpec(
        name: "ls",
        abstract: "One line per item: id, state, attempts, size, age, last error, original name.",
        discussion: """
        Items are read and printed a thousand at a time, so the first lines come at once and
        memory stays the same however many items the spool holds. Each thousand is sorted by
        state and id (a spool of up to a thousand items is listed in id order); beyond that the
        thousands come in the order the folders hold them: pipe through sort for one order.
        The first thousand set the columns' widths.
        """,
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
        let logged = spool.partLogs.loggedItems()
        let now = context.clock.now()
        var widths: [Int]?
        var printed = 0
        // A batch at a time, printed as soon as it is read: the first lines come at once and
        // memory holds one batch, however many items the spool holds.
        try SpoolInventory.forEachBatch(spool, states: states, batchSize: ListCommand.batchSize) { batch in
            if json {
                let objects = try batch.map { item -> String in
                    let data = try JSONSerialization.data(
                        withJSONObject: row(item, spool: spool, logged: logged, now: now).json, options: [.prettyPrinted, .sortedKeys])
                    // As an element of the array Foundation would print: indented one level.
                    return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                        .map { "  " + $0 }.joined(separator: "\n")
                }
                context.print((printed == 0 ? "[\n" : ",\n") + objects.joined(separator: ",\n"), terminator: "")
            } else {
                var lines = batch.map { row($0, spool: spool, logged: logged, now: now).text }
                if widths == nil {
                    // The first batch sets the columns (all of them, for a spool of one batch).
                    lines.insert(ListCommand.header, at: 0)
                    widths = Table.widths(lines)
                }
                context.print(Table.render(lines, widths: widths!))
            }
            printed += batch.count
        }
        if json {
            // `[]` for none: Foundation would pretty-print an empty array over three lines.
            context.print(printed == 0 ? "[]" : "\n]")
        } else if printed == 0 {
            // Silence would look like a failure; say what was looked at.
            context.print("no items in " + states.map { "\($0.rawValue)/" }.joined(separator: ", "))
        }
        return .success
    }

    static let header = ["ID", "STATE", "ATTEMPTS", "SIZE", "AGE", "LAST ERROR", "NAME"]
    /// Items read and printed at once (`SpoolInventory.forEachBatch`).
    static let batchSize = 1000

    /// One item's line and its `--json` object.
    func row(_ item: SpoolInventory.Item, spool: Spool, logged: Set<ItemID>, now: Timestamp) -> (text: [String], json: [String: Any]) {
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
        // A multipart upload in progress: the parts its log holds; a tus upload: the bytes it noted.
        let progress = logged.contains(item.id) ? spool.partLogs.state(of: item.id) : nil
        let tus = logged.contains(item.id) && progress == nil ? spool.partLogs.tusState(of: item.id) : nil
        let age = item.id.createdAt.map { $0.seconds(until: now) } ?? 0
        let size = item.blobSize ?? metadata?.size ?? 0
        let name = metadata?.originalName ?? directName.map(FileName.display)
        var object: [String: Any] = [
            "id": item.id.rawValue, "state": item.location.state.rawValue, "attempts": item.location.attempt,
            "size": size, "ageSeconds": Int(age), "lastError": lastError,
        ]
        if let name { object["originalName"] = name }
        if let progress {
            object["partsDone"] = progress.parts.count
            object["partsTotal"] = progress.plan.partCount
        }
        if let tus { object["tusOffset"] = tus.offset }
        if item.location.state == .pending, let due = item.jsonModified { object["nextDue"] = due.iso8601 }
        let text = [
            item.id.rawValue, item.location.state.rawValue, "\(item.location.attempt)", Output.bytes(size), Output.age(age),
            oneLine((progress.map { "parts \($0.parts.count)/\($0.plan.partCount)" } ?? tus.map { "tus \(Output.bytes($0.offset)) sent" })
                        .map { $0 + (lastError.isEmpty ? "" : "; " + lastError) } ?? lastError, max: 80),
            // Last, so a name of wide characters shifts no other column; escaped, so a name with
            // a newline or an escape sequence stays on its line.
            name.map(LogEscaping.line) ?? "",
        ]
        return (text, object)
    }
}

func oneLine(_ text: String, max: Int) -> String {
    let flat = text.map { $0 == "\n" || $0 == "\r" || $0 == "\t" ? " " : $0 }
    return flat.count <= max ? String(flat) : String(flat.prefix(max - 1)) + "…"
}

/// Left-aligned columns separated by two spaces; the last column is not padded.
enum Table {
    static func render(_ rows: [[String]]) -> String { render(rows, widths: widths(rows)) }

    /// The widest cell of each column.
    static func widths(_ rows: [[String]]) -> [Int] {
        guard let columns = rows.first?.count else { return [] }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = Swift.max(widths[i], cell.count) } }
        return widths
    }

    /// With widths set beforehand (a table printed a batch at a time): a wider cell shifts the
    /// rest of its line.
    static func render(_ rows: [[String]], widths: [Int]) -> String {
        rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell + String(repeating: " ", count: Swift.max(0, (i < widths.count ? widths[i] : 0) - cell.count))
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
