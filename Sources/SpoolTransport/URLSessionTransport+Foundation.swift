import Foundation
import SpoolCore

// What the URLSession driver takes from Foundation: its session, its response, its errors.

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionTransport {
    /// The session spoold uploads with: no cache, no cookies, no stored credentials, one delegate
    /// queue. Public so the benchmark's bare URLSession loop measures exactly these settings.
    public static func makeSession(
        concurrency: Int, deadlineSeconds: Double, idleSeconds: Double, delegate: (any URLSessionDelegate)?
    ) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = concurrency
        configuration.timeoutIntervalForRequest = idleSeconds
        configuration.timeoutIntervalForResource = deadlineSeconds
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // 64 pieces of 16 KiB at most wait for the delegate (see BoundedOperationQueue).
        let queue = delegate == nil ? OperationQueue() : BoundedOperationQueue(limit: 64)
        queue.maxConcurrentOperationCount = 1
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    /// The head the attempt keeps, from URLSession's response.
    static func head(of response: HTTPURLResponse) -> AnswerHead {
        AnswerHead(
            retryAfter: response.value(forHTTPHeaderField: "Retry-After"), location: response.value(forHTTPHeaderField: "Location"),
            etag: response.value(forHTTPHeaderField: "ETag"),
            contentLength: response.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) })
    }
}

extension TransferError {
    /// What a URLSession task's error says, in the attempt's terms. FoundationNetworking maps a
    /// few of libcurl's results to URLError codes and passes every other one on as `unknown`
    /// with libcurl's words only (its TLS failures among them): those stay unnamed, and the
    /// attempt judges them by what went out (`HTTPAttempt`). The one other set of words taken
    /// as they are is libcurl's limit on an answer's head, which has no code of its own.
    init(urlSessionError error: any Error) {
        let nsError = error as NSError
        let code = URLError.Code(rawValue: nsError.code)
        let text = nsError.localizedDescription
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
