import Foundation
import SpoolCore
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Uploads with one long-lived URLSession, streaming each blob from disk (`uploadTask(fromFile:)`).
///
/// On Linux, URLSession does not enforce `timeoutIntervalForResource`, so the overall deadline is
/// ours: a timer cancels the task (RELIABILITY rule 10). Redirects are not followed here: a 3xx
/// comes back as an outcome and is retried or failed by the rules, never re-sent elsewhere.
public final class URLSessionTransport: NSObject, UploadTransport, URLSessionTaskDelegate, @unchecked Sendable {
    /// Bytes of response body kept for the attempt history.
    public static let excerptLength = 512

    private var session: URLSession!
    private let deadlineSeconds: Double
    private let timers = DispatchQueue(label: "spoold.transport.deadlines")
    private let tasks = Mutex<[Int: URLSessionTask]>([:])
    private let timedOut = Mutex<Set<Int>>([])
    private let nextKey = Mutex(0)

    /// - Parameters:
    ///   - concurrency: connections per host, matching the engine's uploads at once.
    ///   - deadlineSeconds: overall time one request may take.
    ///   - idleSeconds: longest silence on the connection.
    public init(concurrency: Int, deadlineSeconds: Double, idleSeconds: Double) {
        self.deadlineSeconds = deadlineSeconds
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = concurrency
        configuration.timeoutIntervalForRequest = idleSeconds
        configuration.timeoutIntervalForResource = deadlineSeconds
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    public func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
        guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https"
        else {
            completion(UploadOutcome.status(400, excerpt: nil).with(error: "invalid URL '\(request.url)'"))
            return
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.setValue(request.contentType, forHTTPHeaderField: "Content-Type")
        urlRequest.setValue(request.id.rawValue, forHTTPHeaderField: "Idempotency-Key")
        let fileURL = URL(fileURLWithPath: request.blobPath)
        let started = Date()
        let taskID = nextKey.withLock { key in
            key += 1
            return key
        }
        let task = session.uploadTask(with: urlRequest, fromFile: fileURL) { [weak self] data, response, error in
            guard let self else { return }
            let wasTimedOut = self.finish(taskID)
            completion(self.outcome(data: data, response: response, error: error, timedOut: wasTimedOut, started: started))
        }
        tasks.withLock { $0[taskID] = task }
        timers.asyncAfter(deadline: .now() + deadlineSeconds) { [weak self] in
            guard let self else { return }
            let running = self.tasks.withLock { $0[taskID] }
            guard let running else { return }
            self.timedOut.withLock { _ = $0.insert(taskID) }
            running.cancel()
        }
        task.resume()
    }

    public func cancelAll() {
        for task in tasks.withLock({ Array($0.values) }) { task.cancel() }
    }

    /// Refuses every redirect: the 3xx itself becomes the outcome.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    private func finish(_ taskID: Int) -> Bool {
        tasks.withLock { _ = $0.removeValue(forKey: taskID) }
        return timedOut.withLock { $0.remove(taskID) != nil }
    }

    private func outcome(data: Data?, response: URLResponse?, error: Error?, timedOut: Bool, started: Date) -> UploadOutcome {
        if let http = response as? HTTPURLResponse, error == nil {
            var outcome = UploadOutcome.status(http.statusCode, excerpt: URLSessionTransport.excerpt(data))
            if let value = http.value(forHTTPHeaderField: "Retry-After") {
                outcome.retryAfterSeconds = RetryAfter.seconds(from: value, now: Date())
            }
            return outcome
        }
        if timedOut {
            return .network("no complete answer within the \(Int(deadlineSeconds)) s deadline (--timeout)")
        }
        let nsError = error as NSError?
        let code = URLError.Code(rawValue: nsError?.code ?? URLError.unknown.rawValue) ?? .unknown
        let text = URLSessionTransport.describe(code, fallback: nsError?.localizedDescription ?? "unknown error")
        return .network(text, beforeSending: URLSessionTransport.isUnreachable(code))
    }

    /// Errors that mean the request never reached a server: an outage, not the item's fault.
    static func isUnreachable(_ code: URLError.Code) -> Bool {
        switch code {
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
             .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
             .internationalRoamingOff, .callIsActive, .dataNotAllowed:
            true
        default:
            false
        }
    }

    static func describe(_ code: URLError.Code, fallback: String) -> String {
        switch code {
        case .cannotConnectToHost: "connection refused"
        case .cannotFindHost, .dnsLookupFailed: "host not found"
        case .notConnectedToInternet: "no network"
        case .timedOut: "timed out (no data within the idle timeout)"
        case .networkConnectionLost: "connection lost mid-request"
        case .badServerResponse: "bad server response"
        case .cancelled: "cancelled"
        case .secureConnectionFailed: "TLS handshake failed"
        case .fileDoesNotExist, .noPermissionsToReadFile: "cannot read the blob"
        default: fallback
        }
    }

    /// The first bytes of a response body as one printable line.
    static func excerpt(_ data: Data?) -> String? {
        guard let data, !data.isEmpty else { return nil }
        let text = String(decoding: data.prefix(excerptLength), as: UTF8.self)
        let cleaned = String(text.unicodeScalars.map { $0.value < 32 || $0.value == 127 ? " " : Character($0) })
        return cleaned.trimmingCharacters(in: .whitespaces)
    }
}

extension UploadOutcome {
    fileprivate func with(error: String) -> UploadOutcome {
        var copy = self
        copy.networkError = error
        return copy
    }
}
