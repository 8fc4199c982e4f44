import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SpoolCore

/// Signed S3 requests from a test (create a bucket, read an object, list keys), so a test sees
/// what any S3 client of the store would see, signed by the same `SigV4Signer` spoold uses.
struct S3TestClient {
    struct Response {
        var status: Int
        var body: Data
        /// The answer's header fields, names lowercased.
        var headers: [String: String] = [:]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// `http://127.0.0.1:PORT`; requests are path-style.
    let endpoint: String
    let signer: SigV4Signer

    init(endpoint: String, accessKey: String, secretKey: String, region: String = "us-east-1") {
        self.endpoint = endpoint
        signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: accessKey, secretAccessKey: secretKey), region: region)
    }

    /// One signed request; nil when no answer came (refused, reset, or `timeout` passed).
    /// - Parameter path: already percent-encoded, as signed.
    func send(_ method: String, path: String, query: String = "", body: Data = Data(), timeout: Double = 10) -> Response? {
        guard let url = URL(string: endpoint + path + (query.isEmpty ? "" : "?" + query)),
              let host = url.host, let port = url.port else { return nil }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        if !body.isEmpty { request.httpBody = body }
        let headers = signer.headers(
            method: method, host: "\(host):\(port)", path: path, query: query,
            payloadHash: SigV4Signer.hex(SHA256.hash([UInt8](body))), date: Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970))
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return S3TestClient.fetch(request, timeout: timeout)
    }

    /// CreateBucket; 200, or 409 when it exists already.
    func createBucket(_ bucket: String) -> Response? { send("PUT", path: "/" + bucket) }

    /// The object's bytes (GetObject), or nil unless the answer is 200.
    func object(_ bucket: String, _ key: String) -> Data? {
        guard let response = send("GET", path: "/\(bucket)/" + S3TestClient.encode(key), timeout: 30), response.status == 200 else {
            return nil
        }
        return response.body
    }

    /// Every key under `prefix` (ListObjectsV2, page by page), or nil when a page fails.
    func keys(_ bucket: String, prefix: String = "") -> [String]? {
        var keys: [String] = []
        var token: String?
        repeat {
            var query = "list-type=2&prefix=" + S3TestClient.encode(prefix, keepSlash: false)
            if let token { query = "continuation-token=" + S3TestClient.encode(token, keepSlash: false) + "&" + query }
            guard let page = send("GET", path: "/" + bucket, query: query), page.status == 200 else { return nil }
            keys += S3TestClient.elements("Key", in: page.text)
            token = S3TestClient.elements("NextContinuationToken", in: page.text).first
        } while token != nil
        return keys.sorted()
    }

    /// The texts of every `<name>…</name>` in an S3 XML answer, entities decoded.
    static func elements(_ name: String, in xml: String) -> [String] {
        xml.components(separatedBy: "<\(name)>").dropFirst().compactMap { chunk in
            chunk.range(of: "</\(name)>").map { range in
                String(chunk[..<range.lowerBound]).replacingOccurrences(of: "&lt;", with: "<")
                    .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&quot;", with: "\"")
                    .replacingOccurrences(of: "&apos;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
            }
        }
    }

    /// RFC 3986 percent-encoding as SigV4 wants it: unreserved bytes kept, and slashes in keys.
    static func encode(_ text: String, keepSlash: Bool = true) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(Character(Unicode.Scalar(byte)))
            case UInt8(ascii: "/") where keepSlash:
                out.append("/")
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// One HTTP exchange, waited for on the task's completion (bounded by `timeout`).
    static func fetch(_ request: URLRequest, timeout: Double) -> Response? {
        final class Outcome: @unchecked Sendable {
            var response: Response?
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: request) { data, response, _ in
            if let http = response as? HTTPURLResponse {
                let headers = Dictionary(
                    http.allHeaderFields.compactMap { ($0.key as? String).map { ($0.lowercased(), "\(http.allHeaderFields[$0]!)") } },
                    uniquingKeysWith: { first, _ in first })
                outcome.response = Response(status: http.statusCode, body: data ?? Data(), headers: headers)
            }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout + 1) == .timedOut {
            task.cancel()
            return nil
        }
        return outcome.response
    }
}
