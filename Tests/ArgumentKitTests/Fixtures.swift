import ArgumentKit

/// A small command shaped like `spoold enqueue`, shared by the tests.
let enqueueSpec = CommandSpec(
    name: "enqueue",
    abstract: "Copy files into the spool for upload.",
    discussion: "Exit codes:\n  0  all files enqueued\n  2  bad arguments",
    options: [
        OptionSpec("spool", short: "s", valueName: "DIR", help: "The spool directory.",
                   defaultDescription: "$SPOOLD_SPOOL, then ./spool"),
        OptionSpec("header", kind: .repeatedValue, valueName: "NAME:VALUE", help: "Extra HTTP header."),
        OptionSpec("field", help: "A metadata field."),
        OptionSpec("retries", valueName: "N", help: "Attempts before giving up."),
        OptionSpec("timeout", valueName: "DURATION", help: "Per-attempt timeout."),
        .flag("verbose", short: "v", help: "Log every step."),
        .flag("dry-run", help: "Check, but change nothing."),
    ],
    positionals: [PositionalSpec("FILE", help: "A file to enqueue.", repeating: true)]
)

/// Two required positionals and an optional third, no repetition.
let copySpec = CommandSpec(
    name: "copy",
    abstract: "Copy one item.",
    positionals: [
        PositionalSpec("SOURCE", help: "Item to copy."),
        PositionalSpec("DEST", help: "Where to put it."),
        PositionalSpec("NOTE", help: "A remark.", optional: true),
    ]
)

/// No positionals at all.
let statusSpec = CommandSpec(
    name: "status", abstract: "Show the spool.", options: [.flag("json", help: "Machine-readable output.")])

/// Parses, or fails the test with the error's message.
func parse(_ arguments: [String], _ spec: CommandSpec = enqueueSpec) throws -> ParsedArguments {
    try ArgumentParser.parse(arguments, for: spec)
}

/// The error message `arguments` produce, or nil if they parse.
func errorMessage(_ arguments: [String], _ spec: CommandSpec = enqueueSpec) -> String? {
    do {
        _ = try ArgumentParser.parse(arguments, for: spec)
        return nil
    } catch {
        return error.message
    }
}
