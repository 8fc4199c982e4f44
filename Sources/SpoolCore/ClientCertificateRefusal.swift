/// A TLS handshake the server refused for the client certificate it wants (mTLS): no
/// certificate, one from a CA it does not trust, an expired or revoked one. Every upload meets the
/// same refusal until the operator mends `--cert`/`--key` (or the server's trust), so it is a
/// configuration problem (`UploadOutcome.Class.configuration`): uploads pause and one probe at a
/// time asks again, no attempt is counted, and the reason is logged once. Sending each item three
/// times and parking it in `failed/` helped nobody.
///
/// What the transports see of it:
/// - TLS 1.2: the server's fatal alert ends the handshake; libcurl says so in its error text
///   (OpenSSL's packed error code, `error:0A000418:`: `alert(inOpenSSLText:)`).
/// - TLS 1.3: the client's side of the handshake is over before the server has checked the
///   certificate, and the server's alert (116 `certificate_required`, 48 `unknown_ca`...) comes
///   after it, with the connection closed at once; libcurl often never reads it and reports a
///   failed send or a connection that ended. libcurl's transport watches the handshake
///   (OpenSSL's message callback, `TLSHandshakeNote`): a server that asked for a client
///   certificate and ended the connection before any answer, without having shown that it took
///   the certificate, refused it, alert read or not.
public enum ClientCertificateRefusal {
    /// The fatal alerts (RFC 8446 section 6.2, RFC 5246 section 7.2.2) a server sends about the
    /// client's certificate, by number. 40 `handshake_failure` counts only when the server asked
    /// for a certificate: TLS 1.2 servers send it for a missing one, and for much else.
    public static let alertNames: [Int: String] = [
        40: "handshake_failure", 42: "bad_certificate", 43: "unsupported_certificate", 44: "certificate_revoked",
        45: "certificate_expired", 46: "certificate_unknown", 48: "unknown_ca", 49: "access_denied", 116: "certificate_required",
    ]

    /// Why a hop that got no answer failed for the client certificate, in words an operator can
    /// act on; nil when it did not (or nothing says so).
    /// - Parameters:
    ///   - alert: the fatal alert the server sent, if one was read.
    ///   - handshake: what the transport saw of the handshake (libcurl's transport only).
    public static func reason(alert: Int?, handshake: TLSHandshakeNote?) -> String? {
        let requested = handshake?.certificateRequested ?? false
        let presented = handshake?.certificatePresented ?? false
        let give = presented ? "" : ": give one with --cert and --key (--transport curl)"
        if let alert, let name = alertNames[alert], alert != 40 || requested {
            let said = "TLS alert \(alert) \(name)"
            switch alert {
            case 116: return "the server requires a client certificate (\(said))\(give)"
            case 48: return "the server does not trust the CA that issued the client certificate (\(said)): check --cert against the CAs the server trusts"
            case 45: return "the server says the client certificate has expired (\(said)): renew --cert"
            case 44: return "the server says the client certificate was revoked (\(said)): replace --cert"
            case 49: return "the server denies this client certificate access (\(said))"
            case 40: return "the server refused the handshake after asking for a client certificate (\(said))\(presented ? ": check --cert and --key" : give)"
            default: return "the server refused the client certificate (\(said)): check --cert and --key"
            }
        }
        guard requested, !(handshake?.certificateTaken ?? false) else { return nil }
        return presented
            ? "the server asked for the client certificate, then closed the connection before the request: it refuses the certificate (check --cert against the CAs the server trusts, and its dates)"
            : "the server asked for a client certificate, then closed the connection before the request: it requires one\(give)"
    }

    /// The alert a server sent, from libcurl's words for an OpenSSL error
    /// (`OpenSSL/3.0.19: error:0A000418:SSL routines::tlsv1 alert unknown ca`): OpenSSL packs its
    /// library and reason into the hex code, and an alert received is reason 1000 + its number
    /// (`SSL_AD_REASON_OFFSET`). OpenSSL 3 keeps the library in bits 23-30 and the reason in
    /// 0-22; 1.1 kept them in 24-31 and 0-11. Only `alertNames`' alerts are taken.
    public static func alert(inOpenSSLText text: String) -> Int? {
        let sslLibrary: UInt32 = 20
        var rest = Substring(text)
        while let found = rest.firstRange(of: "error:") {
            rest = rest[found.upperBound...]
            let hex = rest.prefix(8)
            guard hex.count == 8, rest.dropFirst(8).first == ":", let code = UInt32(hex, radix: 16) else { continue }
            let reason: UInt32? =
                if (code >> 23) & 0xFF == sslLibrary { code & 0x7F_FFFF } else if code >> 24 == sslLibrary { code & 0xFFF } else { nil }
            if let reason, reason > 1000, alertNames[Int(reason) - 1000] != nil { return Int(reason) - 1000 }
        }
        return nil
    }
}

/// What libcurl's transport saw of one connection's TLS handshake (OpenSSL's message callback):
/// whether the server asked for a client certificate, whether it then showed that it took
/// what it was given, and the fatal alert it sent, if one was read. `ClientCertificateRefusal`
/// judges a failed hop by it.
public struct TLSHandshakeNote: Equatable, Sendable {
    /// The server sent a CertificateRequest.
    public var certificateRequested: Bool
    /// The server went on after it had the client's certificate (or its absence): a session
    /// ticket (sent once the client's whole flight was checked), or, before TLS 1.3, its Finished
    /// (which in TLS 1.3 comes before the client's certificate, so says nothing of it).
    public var certificateTaken: Bool
    /// A fatal alert from the server, by number.
    public var alert: Int?
    /// A client certificate was configured (`--cert`), so the server was shown one if it asked.
    public var certificatePresented: Bool

    public init(certificateRequested: Bool = false, certificateTaken: Bool = false, alert: Int? = nil, certificatePresented: Bool = false) {
        (self.certificateRequested, self.certificateTaken) = (certificateRequested, certificateTaken)
        (self.alert, self.certificatePresented) = (alert, certificatePresented)
    }

    /// TLS record and handshake message types, as OpenSSL's message callback reports them.
    public static let alertRecord = 21
    public static let handshakeRecord = 22

    /// One protocol message the server sent (OpenSSL's message callback, `write_p` 0): its TLS
    /// `version` (0x0304 for TLS 1.3), record `contentType` and first bytes.
    public mutating func received(version: Int, contentType: Int, first: UInt8, second: UInt8?) {
        switch contentType {
        case TLSHandshakeNote.alertRecord:
            // [level, description]; level 2 is fatal.
            if first == 2, let second { alert = alert ?? Int(second) }
        case TLSHandshakeNote.handshakeRecord:
            switch first {
            case 13: certificateRequested = true  // certificate_request
            case 4: certificateTaken = true  // new_session_ticket
            case 20 where version < 0x0304: certificateTaken = true  // finished
            default: break
            }
        default:
            break
        }
    }
}
