import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Synchronous URLSession calls for tests, each bounded: the request has
/// `timeoutIntervalForRequest` and the wait for its completion has a hard limit on top.
enum URLSessionClient {
    struct Result {
        var status: Int?
        var headers: [String: String] = [:]
        var body: Data = Data()
        var error: Error?
    }

    /// Holds the completion handler's outcome across threads.
    private final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private var stored = Result()

        func set(_ data: Data?, _ response: URLResponse?, _ error: Error?) {
            lock.lock()
            defer { lock.unlock() }
            let http = response as? HTTPURLResponse
            stored.status = http?.statusCode
            for (key, value) in http?.allHeaderFields ?? [:] {
                stored.headers["\(key)".lowercased()] = "\(value)"
            }
            stored.body = data ?? Data()
            stored.error = error
        }

        var result: Result {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
    }

    static func makeSession(timeout: Double) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 4
        return URLSession(configuration: configuration)
    }

    /// PUTs (or `method`s) `body` to `url` with `uploadTask(with:from:)`.
    static func upload(
        _ url: String, method: String = "PUT", body: Data, headers: [String: String] = [:],
        timeout: Double = 10, session: URLSession? = nil
    ) -> Result {
        let session = session ?? makeSession(timeout: timeout)
        return run(timeout: timeout) { done in
            session.uploadTask(with: request(url, method: method, headers: headers), from: body, completionHandler: done)
        }
    }

    /// PUTs the file at `fileURL` with `uploadTask(with:fromFile:)`.
    static func upload(
        _ url: String, fromFile fileURL: URL, headers: [String: String] = [:], timeout: Double = 10
    ) -> Result {
        let session = makeSession(timeout: timeout)
        return run(timeout: timeout) { done in
            session.uploadTask(with: request(url, method: "PUT", headers: headers), fromFile: fileURL, completionHandler: done)
        }
    }

    /// A request without a body (GET by default) with `dataTask`.
    static func fetch(_ url: String, method: String = "GET", timeout: Double = 10) -> Result {
        let session = makeSession(timeout: timeout)
        return run(timeout: timeout) { done in
            session.dataTask(with: request(url, method: method, headers: [:]), completionHandler: done)
        }
    }

    private static func request(_ url: String, method: String, headers: [String: String]) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    private static func run(
        timeout: Double,
        makeTask: (@escaping @Sendable (Data?, URLResponse?, Error?) -> Void) -> URLSessionTask
    ) -> Result {
        let box = Box()
        let finished = DispatchSemaphore(value: 0)
        let task = makeTask { data, response, error in
            box.set(data, response, error)
            finished.signal()
        }
        task.resume()
        if finished.wait(timeout: .now() + timeout + 10) == .timedOut {
            task.cancel()
            var result = Result()
            result.error = URLError(.timedOut)
            return result
        }
        return box.result
    }
}
