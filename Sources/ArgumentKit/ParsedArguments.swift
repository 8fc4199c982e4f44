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

    /// The value of a `.value` option as a number of bytes (`ByteUnits`: `500000`, `64K`, `2GiB`),
    /// required to lie in `range`. Nil when not given. `limits` says where the range comes from
    /// when it is not obvious (`S3's part limits`); it is added to the out-of-range message.
    public func bytes(
        _ name: String, range: ClosedRange<Int64> = 1...Int64.max, limits: String? = nil
    ) throws(ArgumentError) -> Int64? {
        guard let text = value(name) else { return nil }
        return try bytes(text, of: name, range: range, limits: limits)
    }

    /// `text`, a part of option `name`'s value (a rate in a `--limit-rate` timetable), as a number
    /// of bytes: read and checked as `bytes(_:range:limits:)` reads a whole value.
    public func bytes(
        _ text: String, of name: String, range: ClosedRange<Int64> = 1...Int64.max, limits: String? = nil
    ) throws(ArgumentError) -> Int64 {
        let bytes: Int64
        switch ByteUnits.parse(text) {
        case .success(let parsed): bytes = parsed
        case .failure(.ambiguous(let suggestion)):
            throw failure(
                "--\(name) '\(text)' is ambiguous (powers of 1000 or of 1024?): write \(suggestion) or \(suggestion)iB for powers of 1024, or the number of bytes")
        case .failure(.tooLarge): throw failure("--\(name) '\(text)' is too large")
        case .failure(.notASize):
            throw failure("--\(name) '\(text)' is not a size: a whole number of bytes, or one followed by \(ByteUnits.rule) (e.g. 500M, 2GiB)")
        }
        guard range.contains(bytes) else {
            let low = ByteUnits.exactText(range.lowerBound)
            let bounds = range.upperBound == Int64.max ? "at least \(low)" : "between \(low) and \(ByteUnits.exactText(range.upperBound))"
            let given = ByteUnits.exactText(bytes)
            throw failure(
                "--\(name) '\(text)'\(given == text ? "" : " (\(given))") must be \(bounds)" + (limits.map { " (\($0))" } ?? ""))
        }
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
