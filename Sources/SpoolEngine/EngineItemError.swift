import SpoolCore

/// Why one item cannot be uploaded; never stops the daemon.
struct EngineItemError: Error, CustomStringConvertible {
    var reason: FailureReason
    init(_ code: FailureCode, _ text: String) { reason = FailureReason(code, text) }
    var description: String { reason.text }
}
