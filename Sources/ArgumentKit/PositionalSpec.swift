/// One positional argument of a command, e.g. the `FILE...` in `spoold enqueue FILE...`.
public struct PositionalSpec: Sendable {
    /// Placeholder shown in usage, help and errors, e.g. `FILE`.
    public var name: String
    public var help: String
    /// Takes every remaining positional (`FILE...`); only the last positional may repeat.
    public var repeating: Bool
    /// May be left out (`[FILE]`); optional positionals come after the required ones.
    public var optional: Bool
    /// What a shell offers here; unless given, read from `name` as for an option's value.
    public var completion: ValueCompletion

    public init(
        _ name: String, help: String, repeating: Bool = false, optional: Bool = false, completion: ValueCompletion? = nil
    ) {
        self.name = name
        self.help = help
        self.repeating = repeating
        self.optional = optional
        self.completion = completion ?? ValueCompletion(valueName: name)
    }

    /// How the positional appears in a usage line: `FILE`, `[FILE]`, `FILE...` or `[FILE...]`.
    var usageForm: String {
        let base = repeating ? name + "..." : name
        return optional ? "[" + base + "]" : base
    }
}
