import ArgumentKit
import SpoolStore

/// Options shared by several commands, declared once so their help reads the same everywhere.
enum CommonOptions {
    static let spool = OptionSpec(
        "spool", kind: .value, valueName: "DIR", help: "The spool directory; its layout is created on first use.",
        defaultDescription: "$SPOOLD_SPOOL, then ./spool")
    /// For inspection commands, which never create a spool (a typo must not make an empty one).
    static let existingSpool = OptionSpec(
        "spool", kind: .value, valueName: "DIR", help: "The spool directory (it must exist).",
        defaultDescription: "$SPOOLD_SPOOL, then ./spool")
    static let json = OptionSpec.flag("json", help: "Print JSON instead of a table.")

    static func spoolPath(_ arguments: ParsedArguments, _ context: CommandContext) -> String {
        arguments.value("spool") ?? context.environment["SPOOLD_SPOOL"].flatMap { $0.isEmpty ? nil : $0 } ?? "spool"
    }

    /// Opens the spool for a command that must not create one (inspection commands). Such a
    /// command holds no daemon lock, so its commits (`retry`, `purge`) wait for a daemon's start-up
    /// recovery and keep it out while they stage.
    static func openExisting(_ path: String) throws -> Spool {
        let spool = try Spool(path: path, create: false)
        spool.sharesStagingWithRecovery = true
        spool.mayReleaseReserve = false  // the room kept on a full disk is the daemon's
        return spool
    }

    /// `--max-spool-size` (`run`, `drain`, `enqueue`): SI or IEC units, at least one byte.
    static func maximumSpoolSize(_ arguments: ParsedArguments) throws -> Int64? {
        try arguments.bytes(
            "max-spool-size", units: .decimalOrBinary, invalid: "is not a size such as 500M, 2GiB or 1000000")
    }

    /// `--header 'Name: value'`, validated.
    static func headers(_ arguments: ParsedArguments, command: String) throws -> [String: String] {
        var headers: [String: String] = [:]
        for text in arguments.values("header") {
            guard let (name, value) = HeaderValidation.parse(text) else {
                throw ArgumentError(
                    "invalid --header '\(text)': expected 'Name: value' with a token name, no line breaks, and not one of "
                        + HeaderValidation.reserved.sorted().joined(separator: ", "),
                    command: command)
            }
            headers[name] = value
        }
        return headers
    }
}
