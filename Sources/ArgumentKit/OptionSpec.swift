/// One named option of a command: how it is written, whether it takes a value, and its help.
public struct OptionSpec: Sendable {
    public enum Kind: Sendable {
        /// Present or absent; takes no value (`--verbose`).
        case flag
        /// Takes one value; when given more than once, the last one wins.
        case value
        /// Takes one value per occurrence; all of them are kept, in order.
        case repeatedValue
    }

    /// Long name without dashes, e.g. `spool` for `--spool`.
    public var name: String
    /// Optional one-character alias, e.g. `s` for `-s`.
    public var short: Character?
    public var kind: Kind
    /// Placeholder for the value in help and errors, e.g. `DIR`. Ignored for flags.
    public var valueName: String
    /// One or two sentences for the help table.
    public var help: String
    /// Shown after the help as `(default: ...)`, e.g. `$SPOOLD_SPOOL, then ./spool`.
    public var defaultDescription: String?
    /// What a shell offers for the value. Unless given, read from `valueName`: `DIR` is a
    /// directory, `FILE` and `PATH` a file, anything else free text.
    public var completion: ValueCompletion

    public init(
        _ name: String, short: Character? = nil, kind: Kind = .value, valueName: String = "VALUE", help: String,
        defaultDescription: String? = nil, completion: ValueCompletion? = nil
    ) {
        self.name = name
        self.short = short
        self.kind = kind
        self.valueName = valueName
        self.help = help
        self.defaultDescription = defaultDescription
        self.completion = kind == .flag ? .none : completion ?? ValueCompletion(valueName: valueName)
    }

    public static func flag(_ name: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(name, short: short, kind: .flag, help: help)
    }

    /// `--name`, the form used in error messages.
    var longForm: String { "--" + name }
}
