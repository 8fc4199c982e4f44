/// An option declared once with its default and its range (swift-argument-parser's
/// `@Option var attempts = 3`): the help's `(default: ...)` is written from the value a command
/// falls back to, so the two cannot drift apart, and every command that has the option reads it
/// through this one declaration. Put it in a command's options with `spec`.
public struct DefaultedOption<Value: Sendable & Equatable>: Sendable {
    public private(set) var spec: OptionSpec
    /// The value when the option is not given.
    public let defaultValue: Value
    private let read: @Sendable (ParsedArguments) throws(ArgumentError) -> Value?

    /// `spec`'s `defaultDescription` is set from `describe(defaultValue)`.
    public init(
        _ spec: OptionSpec, default defaultValue: Value, describe: (Value) -> String,
        read: @escaping @Sendable (ParsedArguments) throws(ArgumentError) -> Value?
    ) {
        var spec = spec
        spec.defaultDescription = describe(defaultValue)
        (self.spec, self.defaultValue, self.read) = (spec, defaultValue, read)
    }

    /// The value given, checked, or the default.
    public func value(in arguments: ParsedArguments) throws(ArgumentError) -> Value {
        try read(arguments) ?? defaultValue
    }

    /// The same option with help for one command (`OptionSpec.withHelp`).
    public func withHelp(_ help: String) -> DefaultedOption {
        var option = self
        option.spec = spec.withHelp(help)
        return option
    }
}

extension DefaultedOption where Value == Int {
    /// A whole number in `range` (`ParsedArguments.int`).
    public static func integer(
        _ name: String, valueName: String = "N", help: String, range: ClosedRange<Int>, default defaultValue: Int
    ) -> DefaultedOption {
        DefaultedOption(OptionSpec(name, valueName: valueName, help: help), default: defaultValue, describe: { "\($0)" }) {
            arguments throws(ArgumentError) in try arguments.int(name, range: range)
        }
    }
}

extension DefaultedOption where Value == Double {
    /// A duration in seconds in `range` (`ParsedArguments.seconds`), its default written as a
    /// plain number (`300`, `0.5`).
    public static func seconds(
        _ name: String, valueName: String = "SECONDS", help: String, range: ClosedRange<Double>, default defaultValue: Double
    ) -> DefaultedOption {
        DefaultedOption(
            OptionSpec(name, valueName: valueName, help: help), default: defaultValue, describe: NumberParsing.shortDescription
        ) { arguments throws(ArgumentError) in try arguments.seconds(name, range: range) }
    }
}

extension DefaultedOption where Value == Int64 {
    /// A size in `range` (`ParsedArguments.bytes`), its default written as one would give it
    /// (`16M`).
    public static func bytes(
        _ name: String, valueName: String = "BYTES", help: String, range: ClosedRange<Int64>, limits: String? = nil,
        default defaultValue: Int64
    ) -> DefaultedOption {
        DefaultedOption(OptionSpec(name, valueName: valueName, help: help), default: defaultValue, describe: ByteUnits.shortText) {
            arguments throws(ArgumentError) in try arguments.bytes(name, range: range, limits: limits)
        }
    }
}
