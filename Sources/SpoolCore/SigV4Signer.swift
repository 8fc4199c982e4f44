/// AWS Signature Version 4 (header-based): the canonical request, the string to sign, the
/// signing key and the `Authorization` header, for one request at one instant.
///
/// Pure on purpose: the transport signs each attempt at send time with the clock's `now`, so a
/// retry never reuses a stale signature; tests check every step against AWS's published examples.
public struct SigV4Signer: Sendable {
    public static let algorithm = "AWS4-HMAC-SHA256"
    /// `x-amz-content-sha256` of an empty body.
    public static let emptyPayloadHash = hex(SHA256.hash([UInt8]()))

    public var credentials: AWSCredentials
    public var region: String
    public var service: String

    public init(credentials: AWSCredentials, region: String, service: String = "s3") {
        (self.credentials, self.region, self.service) = (credentials, region, service)
    }

    /// The headers to add to a request so S3 accepts it: `x-amz-date`, `x-amz-content-sha256`,
    /// `x-amz-security-token` (with a session token), the request's own headers that must be
    /// signed (`mustBeSigned`: `x-amz-meta-*`, `x-amz-storage-class`...; S3 refuses any `x-amz-*`
    /// header it was not signed with, `HeadersNotSigned`), named in lowercase, and `Authorization`.
    /// One of `own` named like a header set here is left out: the signer's wins.
    /// - Parameters:
    ///   - path: the request's path exactly as sent, already percent-encoded (S3 does not encode
    ///     it again for the canonical request).
    ///   - query: the raw query without `?` (empty for none).
    ///   - host: the `Host` header as sent: the port included when it is not the scheme's default.
    ///   - payloadHash: hex SHA-256 of the body; S3 checks it against what arrives.
    ///   - own: the request's headers; those that must be signed are.
    public func headers(
        method: String, host: String, path: String, query: String = "", payloadHash: String, date: Timestamp,
        own: [String: String] = [:]
    ) -> [String: String] {
        var signed = ["host": host, "x-amz-date": SigV4Signer.amzDate(date), "x-amz-content-sha256": payloadHash]
        if let token = credentials.sessionToken { signed["x-amz-security-token"] = token }
        for (name, value) in own where SigV4Signer.mustBeSigned(name) {
            let lowercased = name.lowercased()
            if signed[lowercased] == nil { signed[lowercased] = value }
        }
        let auth = authorization(method: method, path: path, query: query, headers: signed, payloadHash: payloadHash, date: date)
        signed["host"] = nil  // sent by the HTTP client from the URL
        signed["Authorization"] = auth
        return signed
    }

    /// `AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` over exactly `headers`.
    public func authorization(
        method: String, path: String, query: String, headers: [String: String], payloadHash: String, date: Timestamp
    ) -> String {
        let canonical = SigV4Signer.canonicalRequest(
            method: method, path: path, query: query, headers: headers, payloadHash: payloadHash)
        let signature = SigV4Signer.hex(HMACSHA256.authenticationCode(
            for: Array(stringToSign(canonicalRequest: canonical, date: date).utf8), key: signingKey(date: date)))
        return "\(SigV4Signer.algorithm) Credential=\(credentials.accessKeyID)/\(scope(date: date)), "
            + "SignedHeaders=\(SigV4Signer.signedHeaderNames(headers)), Signature=\(signature)"
    }

    /// `YYYYMMDD/region/service/aws4_request`.
    public func scope(date: Timestamp) -> String {
        "\(SigV4Signer.amzDate(date).prefix(8))/\(region)/\(service)/aws4_request"
    }

    public func stringToSign(canonicalRequest: String, date: Timestamp) -> String {
        [SigV4Signer.algorithm, SigV4Signer.amzDate(date), scope(date: date),
         SigV4Signer.hex(SHA256.hash(Array(canonicalRequest.utf8)))].joined(separator: "\n")
    }

    /// HMAC chain: "AWS4"+secret → date → region → service → "aws4_request".
    public func signingKey(date: Timestamp) -> [UInt8] {
        var key = Array("AWS4\(credentials.secretAccessKey)".utf8)
        for part in [String(SigV4Signer.amzDate(date).prefix(8)), region, service, "aws4_request"] {
            key = HMACSHA256.authenticationCode(for: Array(part.utf8), key: key)
        }
        return key
    }

    /// Method, path, sorted query, lower-cased sorted headers with trimmed values, the signed
    /// header list and the payload hash, one per line.
    public static func canonicalRequest(
        method: String, path: String, query: String, headers: [String: String], payloadHash: String
    ) -> String {
        let lines = headers.map { ($0.key.lowercased(), trimmedValue($0.value)) }.sorted { $0.0 < $1.0 }
            .map { "\($0.0):\($0.1)\n" }.joined()
        return [method, path.isEmpty ? "/" : path, canonicalQuery(query), lines, signedHeaderNames(headers), payloadHash]
            .joined(separator: "\n")
    }

    /// `name=value` pairs sorted by name, then value; a bare name gets an empty value.
    public static func canonicalQuery(_ query: String) -> String {
        guard !query.isEmpty else { return "" }
        let pairs: [(name: String, value: String)] = query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        let sorted = pairs.sorted { a, b in a.name == b.name ? a.value < b.value : a.name < b.name }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// Whether a header a request carries must be signed: S3 refuses an `x-amz-*` header that is
    /// not (others, as `Content-Type`, may go unsigned).
    public static func mustBeSigned(_ name: String) -> Bool {
        name.utf8.count > 6 && name.prefix(6).lowercased() == "x-amz-"
    }

    static func signedHeaderNames(_ headers: [String: String]) -> String {
        headers.keys.map { $0.lowercased() }.sorted().joined(separator: ";")
    }

    /// Leading and trailing blanks removed, inner runs of blanks made one space.
    static func trimmedValue(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    /// `YYYYMMDD'T'HHMMSS'Z'` in UTC.
    public static func amzDate(_ date: Timestamp) -> String {
        let t = CivilTime(date)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let day: String = "\(t.year)" + two(t.month) + two(t.day)
        let time: String = two(t.hour) + two(t.minute) + two(t.second)
        return day + "T" + time + "Z"
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out += [digits[Int(b >> 4)], digits[Int(b & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }
}
