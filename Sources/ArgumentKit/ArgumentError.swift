/// A command line the operator has to fix, with a message saying what is wrong.
///
/// `command` lets the caller point at the right help, e.g. "see 'spoold enqueue --help'".
public struct ArgumentError: Error, Equatable, Sendable, CustomStringConvertible {
    /// E.g. `unknown option '--spoo' (did you mean '--spool'?)`.
    public var message: String
    /// The command whose arguments were being parsed, e.g. `enqueue`.
    public var command: String

    public init(_ message: String, command: String) {
        self.message = message
        self.command = command
    }

    public var description: String { message }
}
