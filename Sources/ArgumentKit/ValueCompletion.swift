/// What a shell's completion offers for an option's value or a positional argument.
public enum ValueCompletion: Sendable, Hashable {
    /// Free text (a URL, a number): nothing is offered, and no file names either.
    case none
    /// A path to a file (directories too, to walk into).
    case file
    /// A path to a directory.
    case directory
    /// One of these words, e.g. `curl` and `urlsession` for `--transport`.
    case choices([String])

    /// The usual reading of a placeholder: `DIR` a directory, `FILE` or `PATH` a file.
    init(valueName: String) {
        switch valueName {
        case "DIR": self = .directory
        case "FILE", "PATH": self = .file
        default: self = .none
        }
    }
}
