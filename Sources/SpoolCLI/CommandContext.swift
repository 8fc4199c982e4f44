import SpoolSystem
import SpoolCore
import SpoolEngine
import SpoolTransport

/// What a command may touch besides its arguments: the environment, the clock, output streams.
public struct CommandContext: Sendable {
    public var environment: [String: String]
    public var clock: any Clock
    public var log: EventLog

    public init(environment: [String: String], clock: any Clock = SystemClock()) {
        self.environment = environment
        self.clock = clock
        let level: EventLog.Level = switch environment["SPOOLD_LOG"] {
        case "debug": .debug
        case "warning": .warning
        case "error": .error
        default: .info
        }
        self.log = EventLog(minimumLevel: level, clock: { [clock] in clock.now() })
    }

    /// Writes to standard output (results: ids, tables, json).
    public func print(_ text: String, terminator: String = "\n") {
        FileDescriptor.standardOutput.write(text + terminator)
    }

    /// Writes to standard error (problems, with the program name), one line whatever the text
    /// holds (a file name given to `enqueue` may contain a newline), URLs redacted (an argument
    /// error may quote `--url`).
    public func complain(_ text: String) {
        FileDescriptor.standardError.write("spoold: \(LogEscaping.line(LogRedaction.urls(in: text)))\n")
    }
}

enum Output {
    /// `1.5 KiB`, `3.2 MiB`.
    static func bytes(_ count: Int64) -> String { ByteText.format(count) }

    /// `42s`, `5m`, `3h`, `2d`.
    static func age(_ seconds: Double) -> String {
        let s = max(0, Int(seconds))
        if s < 120 { return "\(s)s" }
        if s < 7200 { return "\(s / 60)m" }
        if s < 172_800 { return "\(s / 3600)h" }
        return "\(s / 86400)d"
    }
}
