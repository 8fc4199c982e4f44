import SpoolSystem
import SpoolCore

/// One line per event on stderr: `2026-11-21T14:10:03.123Z spoold info: uploaded ...`.
///
/// Plain text on purpose: journald, `tee` and `grep` are the operator's tools. Every message
/// passes `LogRedaction` and `LogEscaping` here, the one way to the log, at every level: no URL's
/// query values or user info reach the log, and no name or server answer can forge a line or
/// drive a terminal.
public struct EventLog: Sendable {
    public enum Level: Int, Comparable, Sendable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var label: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    public var minimumLevel: Level
    /// Written before each line: `drain`'s progress sets "clear this line" so a log line replaces
    /// the progress line instead of running into it.
    public var linePrefix = ""
    private let clock: @Sendable () -> Timestamp

    public init(minimumLevel: Level = .info, clock: @escaping @Sendable () -> Timestamp) {
        self.minimumLevel = minimumLevel
        self.clock = clock
    }

    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level >= minimumLevel else { return }
        let line = "\(linePrefix)\(clock().iso8601) spoold \(level.label): \(LogEscaping.line(LogRedaction.urls(in: message())))\n"
        FileDescriptor.standardError.write(line)
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
