/// A request that got no whole answer: what kind of failure, in words for the history, and
/// whether any of the request went out (nothing did: the endpoint is unreachable, an outage, not
/// the item's fault).
public struct TransportFailure: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case connectionRefused = "connection_refused"
        case hostNotFound = "host_not_found"
        case noNetwork = "no_network"
        case tlsHandshake = "tls_handshake"
        /// The server refused the TLS handshake for the client certificate (`ClientCertificateRefusal`):
        /// a configuration problem.
        case tlsRefused = "tls_refused"
        /// No byte either way for the idle timeout (`--idle-timeout`).
        case idleTimeout = "idle_timeout"
        /// No whole answer within the attempt's deadline (`--timeout`).
        case deadline
        /// The body stopped being taken with nothing queued on the connection (`StalledUpload`).
        case stalled
        /// The connection closed or was reset before the answer was whole.
        case connectionLost = "connection_lost"
        /// The server sent something that is not an HTTP answer.
        case badResponse = "bad_response"
        /// The answer's head was more than libcurl reads.
        case answerHeadTooLarge = "answer_head_too_large"
        /// The body could not be read to hash it before sending (`--content-digest`, S3's payload hash).
        case bodyUnhashable = "body_unhashable"
        /// A failure the transport could not name (its own words in `text`).
        case unidentified
    }

    public var kind: Kind
    /// One line for the history and the log.
    public var text: String
    /// Nothing of the request went out.
    public var beforeSending: Bool

    public init(_ kind: Kind, text: String, beforeSending: Bool) {
        (self.kind, self.text, self.beforeSending) = (kind, text, beforeSending)
    }

    // The one place each failure is worded.

    public static let connectionRefused = TransportFailure(.connectionRefused, text: "connection refused", beforeSending: true)
    public static let hostNotFound = TransportFailure(.hostNotFound, text: "host not found", beforeSending: true)
    public static let noNetwork = TransportFailure(.noNetwork, text: "no network", beforeSending: true)
    public static func tlsHandshake(_ detail: String?) -> TransportFailure {
        TransportFailure(.tlsHandshake, text: detail.map { "TLS handshake failed: \($0)" } ?? "TLS handshake failed", beforeSending: true)
    }
    /// The server refused the client certificate (`reason` says how and what to check): nothing
    /// of the request was taken.
    public static func tlsRefused(_ reason: String) -> TransportFailure {
        TransportFailure(.tlsRefused, text: "TLS: \(reason)", beforeSending: true)
    }
    public static let idleTimeout = TransportFailure(.idleTimeout, text: "timed out (no data within the idle timeout)", beforeSending: false)
    public static func deadline(seconds: Double) -> TransportFailure {
        TransportFailure(.deadline, text: "no complete answer within the \(secondsText(seconds)) deadline (--timeout)", beforeSending: false)
    }
    public static func stalled(quietSeconds: Double) -> TransportFailure {
        TransportFailure(
            .stalled,
            text: "stalled: no body byte taken for \(secondsText(quietSeconds)) with the connection writable and "
                + "nothing queued (a lost write event in libdispatch; docs/performance.md, Known limits)",
            beforeSending: false)
    }
    public static let connectionLost = TransportFailure(.connectionLost, text: "connection lost mid-request", beforeSending: false)
    public static func badResponse(_ detail: String?) -> TransportFailure {
        TransportFailure(.badResponse, text: detail.map { "bad server response: \($0)" } ?? "bad server response", beforeSending: false)
    }
    /// The answer's header section was more than libcurl reads (under both transports): a line
    /// over 100 KiB, or 300 KiB in all. libcurl stops there, holding no more, and calls the first
    /// case "out of memory", which spoold's memory is not. The request went out: retryable.
    public static let answerHeadTooLarge = TransportFailure(
        .answerHeadTooLarge,
        text: "the answer's header section is larger than libcurl reads (a line over 100 KiB or 300 KiB in all; libcurl calls it 'out of memory')",
        beforeSending: false)
    public static func bodyUnhashable(_ what: String, _ detail: String) -> TransportFailure {
        TransportFailure(.bodyUnhashable, text: "could not \(what): \(detail)", beforeSending: false)
    }
    public static func unidentified(_ text: String, beforeSending: Bool) -> TransportFailure {
        TransportFailure(.unidentified, text: text, beforeSending: beforeSending)
    }

    /// `30 s`, `0.5 s`.
    public static func secondsText(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? "\(Int(value)) s" : "\(value) s"
    }
}
