import Foundation
import SpoolCore

// What the URLSession driver takes from Foundation: its session and its response (its errors:
// TransferError+URLSession).

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
            contentLength: response.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }, tus: tusHeaders(of: response))
    }

    /// The tus headers of an answer from a tus server: every answer of one names `Tus-Resumable`
    /// (OPTIONS at least `Tus-Version`), so other answers cost two look-ups.
    static func tusHeaders(of response: HTTPURLResponse) -> TusHeaders? {
        guard response.value(forHTTPHeaderField: "Tus-Resumable") != nil || response.value(forHTTPHeaderField: "Tus-Version") != nil
        else { return nil }
        var headers = TusHeaders()
        for field in TusHeaders.Field.allCases {
            headers[field] = response.value(forHTTPHeaderField: field.rawValue).map { AnswerHeaderLine.trimmedValue($0) }
        }
        return headers
    }
}
