/// Why a transport's transfer ended without a whole answer, in the transport's terms, before
/// `HTTPAttempt` decides what it means for the attempt (`TransportFailure`).
public enum TransferError: Equatable, Sendable {
    case connectionRefused
    case hostNotFound
    case noNetwork
    /// The TLS handshake failed (libcurl's words, if any).
    case tlsHandshake(String?)
    /// The server sent a fatal TLS alert about the client certificate
    /// (`ClientCertificateRefusal.alertNames`), read from libcurl's words: its number, and the words.
    case tlsAlert(Int, String)
    /// The transport's own timer fired: its idle limit, or the attempt's deadline (the attempt
    /// tells which by the time).
    case timedOut
    /// The connection closed or was reset.
    case connectionLost
    /// The server ended an HTTP/2 stream (RST_STREAM): after a whole answer, that answer stands.
    case streamReset
    case badResponse(String?)
    /// The answer's head was more than libcurl reads.
    case answerHeadTooLarge
    /// The transport stopped the transfer because the attempt asked it to (`stopReading`).
    case stoppedOnRequest
    /// Something the transport could not name: its words only.
    case unnamed(String)
}
