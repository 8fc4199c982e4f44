import Foundation
import SpoolCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TransferError {
    /// What a URLSession task's error says, in the attempt's terms. FoundationNetworking maps a
    /// few of libcurl's results to URLError codes and passes every other one on as `unknown`
    /// with libcurl's words only (its TLS failures among them): those stay unnamed, and the
    /// attempt judges them by what went out (`HTTPAttempt`). The other words taken as they are:
    /// libcurl's limit on an answer's head, which has no code of its own, and OpenSSL's code for
    /// a server's alert about the client certificate (`ClientCertificateRefusal`).
    init(urlSessionError error: any Error) {
        let nsError = error as NSError
        let code = URLError.Code(rawValue: nsError.code)
        let text = nsError.localizedDescription
        if let alert = ClientCertificateRefusal.alert(inOpenSSLText: text) {
            self = .tlsAlert(alert, text)
            return
        }
        switch code {
        case .cannotConnectToHost: self = .connectionRefused
        case .cannotFindHost, .dnsLookupFailed: self = .hostNotFound
        case .notConnectedToInternet, .internationalRoamingOff, .callIsActive, .dataNotAllowed: self = .noNetwork
        case .timedOut: self = .timedOut
        case .networkConnectionLost: self = .connectionLost
        case .badServerResponse: self = .badResponse(nil)
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
             .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            self = .tlsHandshake(nil)
        case .unknown where text == "Out of memory" || text.hasPrefix("Too large response headers"):
            self = .answerHeadTooLarge
        default: self = .unnamed(text.isEmpty ? "unknown error" : text)
        }
    }
}
