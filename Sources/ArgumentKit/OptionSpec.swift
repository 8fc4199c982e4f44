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
    /// The help of the declaration this option was made from: `help` itself, unless a command
    /// says what the option does for it (`withHelp`). Commands that share an option share this
    /// declaration (`ProgramSpec.problems`).
    public private(set) var declaredHelp: String

    public init(
        _ name: String, short: Character? = nil, kind: Kind = .value, valueName: String = "VALUE", help: String,
        defaultDescription: String? = nil, completion: ValueCompletion? = nil
    ) {
        self.name = name
        self.short = short
        self.kind = kind
        self.valueName = valueName
        self.help = help
        declaredHelp = help
        self.defaultDescription = defaultDescription
        self.completion = kind == .flag ? .none : completion ?? ValueCompletion(valueName: valueName)
    }

    public static func flag(_ name: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(name, short: short, kind: .flag, help: help)
    }

    /// This option with help that says what it does in one command (`check --repair`'s
    /// `--max-attempts`), keeping everything else of the one declaration: its value, default
    /// and completion.
    public func withHelp(_ help: String) -> OptionSpec {
        var option = self
        option.help = help
        return option
    }

    /// How `other`, an option of the same name, differs from this one: what two commands sharing
    /// an option must not differ in (see `ProgramSpec.problems`).
    func differences(from other: OptionSpec) -> [String] {
        var differences: [String] = []
        func differ<T: Equatable>(_ what: String, _ mine: T, _ theirs: T, _ text: (T) -> String) {
            if mine != theirs { differences.append("\(what) \(text(mine)), not \(text(theirs))") }
        }
        differ("kind", kind, other.kind) { "\($0)" }
        differ("short name", short, other.short) { $0.map { "-\($0)" } ?? "none" }
        if kind != .flag { differ("value name", valueName, other.valueName) { $0 } }
        differ("default", defaultDescription, other.defaultDescription) { $0.map { "'\($0)'" } ?? "none" }
        differ("completion", completion, other.completion) { "\($0)" }
        differ("help", declaredHelp, other.declaredHelp) { "'\($0)'" }
        return differences
    }

    /// `--name`, the form used in error messages.
    var longForm: String { "--" + name }
}
