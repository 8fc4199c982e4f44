/// What the parser found on one command line, read back by option name.
///
/// Asking for a name the command does not declare, or with the accessor of another kind
/// (`flag` on a value option), is a programming error and stops the program: a typo there
/// would otherwise silently read as "not given".
public struct ParsedArguments: Sendable {
    /// Positional arguments in order, including everything after `--`.
    public var positionals: [String] = []
    /// `-h` or `--help` appeared before `--`. Other problems on the line are then not reported.
    public var helpRequested = false

    let command: String
    let kindsByName: [String: OptionSpec.Kind]
    var valuesByName: [String: [String]] = [:]
    var flagsGiven: Set<String> = []

    init(spec: CommandSpec) {
        command = spec.name
        var kinds: [String: OptionSpec.Kind] = [:]
        for option in spec.options { kinds[option.name] = option.kind }
        kindsByName = kinds
    }

    /// Whether the flag was given.
    public func flag(_ name: String) -> Bool {
        requireDeclared(name, as: .flag)
        return flagsGiven.contains(name)
    }

    /// The value of a `.value` option; the last occurrence wins. Nil when not given.
    public func value(_ name: String) -> String? {
        requireDeclared(name, as: .value)
        return valuesByName[name]?.last
    }

    /// Every value of a `.repeatedValue` option, in the order given. Empty when not given.
    public func values(_ name: String) -> [String] {
        requireDeclared(name, as: .repeatedValue)
        return valuesByName[name] ?? []
    }

    /// The value of a `.value` option as a whole number (`42`, `-3`, `+7`), optionally required
    /// to lie in `range`. Nil when not given.
    public func int(_ name: String, range: ClosedRange<Int>? = nil) throws(ArgumentError) -> Int? {
        guard let text = value(name) else { return nil }
        let number: Int
        switch NumberParsing.integer(text) {
        case .success(let parsed): number = parsed
        case .failure(.outOfRange): throw failure("value '\(text)' for '--\(name)' is out of range")
        case .failure: throw failure("option '--\(name)' needs a whole number, got '\(text)'")
        }
        if let range, !range.contains(number) {
            throw failure(
                "option '--\(name)' must be between \(range.lowerBound) and \(range.upperBound), got \(number)")
        }
        return number
    }

    /// The value of a `.value` option as a duration in seconds, optionally required to lie in
    /// `range`. Nil when not given. Accepts a plain number of seconds (`2`, `0.5`) or a number
    /// with one lowercase unit: `ms`, `s`, `m`, `h` (`250ms`, `1.5s`, `2m`, `1h`). Negative
    /// durations, exponents, `inf` and `nan` are refused.
    public func seconds(_ name: String, range: ClosedRange<Double>? = nil) throws(ArgumentError) -> Double? {
        guard let text = value(name) else { return nil }
        let seconds: Double
        switch NumberParsing.seconds(text) {
        case .success(let parsed): seconds = parsed
        case .failure(.negative): throw failure("option '--\(name)' needs a duration that is not negative, got '\(text)'")
        case .failure(.outOfRange): throw failure("value '\(text)' for '--\(name)' is out of range")
        case .failure(.notANumber):
            throw failure("option '--\(name)' needs a duration such as 30, 1.5s, 250ms, 2m or 1h; got '\(text)'")
        }
        if let range, !range.contains(seconds) {
            let low = NumberParsing.shortDescription(range.lowerBound)
            let high = NumberParsing.shortDescription(range.upperBound)
            throw failure(
                "option '--\(name)' must be between \(low) and \(high) seconds, got \(NumberParsing.shortDescription(seconds))"
            )
        }
        return seconds
    }

    /// The value of a `.value` option as a number of bytes in `units`, required to lie in `range`.
    /// Nil when not given. Anything else is refused as `--NAME 'TEXT' <invalid>`, so `invalid`
    /// shows the option's own examples or limits (`is not a size such as 500M or 2GiB`).
    public func bytes(
        _ name: String, units: ByteUnits, range: ClosedRange<Int64> = 1...Int64.max, invalid: String
    ) throws(ArgumentError) -> Int64? {
        guard let text = value(name) else { return nil }
        guard let bytes = units.parse(text), range.contains(bytes) else { throw failure("--\(name) '\(text)' \(invalid)") }
        return bytes
    }

    private func failure(_ message: String) -> ArgumentError { ArgumentError(message, command: command) }

    private func requireDeclared(_ name: String, as kind: OptionSpec.Kind) {
        guard let declared = kindsByName[name] else {
            preconditionFailure("ArgumentKit: '--\(name)' is not an option of command '\(command)'")
        }
        precondition(declared == kind, "ArgumentKit: '--\(name)' of '\(command)' is \(declared), read as \(kind)")
    }
}
