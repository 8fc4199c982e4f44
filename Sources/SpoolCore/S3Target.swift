/// `--url s3://BUCKET/PREFIX`: where objects go, and the HTTP URL template that reaches them.
///
/// The object key is PREFIX followed by the item's name (its path below incoming/) when PREFIX
/// is empty or ends in `/`; `{name}`, `{id}` and the date parts (`{date}`, `{year}`...) in PREFIX
/// are substituted as for HTTP URLs (`URLTemplate`), an unknown `{word}` is refused. The
/// HTTP template is an ordinary `URLTemplate`, so keys are encoded exactly as HTTP paths are:
/// each segment percent-encoded to RFC 3986 unreserved bytes, slashes kept — which is also the
/// canonical URI SigV4 wants for S3 (no second encoding).
public struct S3Target: Equatable, Sendable {
    public var bucket: String
    /// The key template: PREFIX, unencoded, placeholders kept.
    public var keyTemplate: String

    /// Why `url` is not a usable `s3://` URL, or nil for a URL without that scheme.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Whether `url` asks for S3 (`s3://`), so the caller knows which parser to use.
    public static func isS3(_ url: String) -> Bool { url.lowercased().hasPrefix("s3://") }

    public init(parsing url: String) throws {
        guard S3Target.isS3(url) else { throw ParseError(description: "'\(url)' is not an s3:// URL") }
        let rest = url.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        let key = rest.dropFirst(bucket.count).drop { $0 == "/" }
        guard S3Target.isValidBucket(bucket) else {
            throw ParseError(description:
                "'\(bucket)' is not an S3 bucket name (3-63 characters: lower-case letters, digits, '.', '-'; starting and ending with a letter or digit)")
        }
        guard !key.contains("?"), !key.contains("#"), !key.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 })
        else { throw ParseError(description: "the key prefix in '\(url)' may not hold '?', '#' or control characters") }
        do {
            try URLTemplate.validate(String(key))
        } catch {
            throw ParseError(description: "\(error) in the key prefix of '\(url)'")
        }
        self.bucket = bucket
        self.keyTemplate = String(key)
    }

    /// S3's bucket naming rules (the common subset every S3-compatible store accepts).
    public static func isValidBucket(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return false }
        func alphanumeric(_ c: UInt8) -> Bool { (c >= 97 && c <= 122) || (c >= 48 && c <= 57) }
        guard alphanumeric(bytes.first!), alphanumeric(bytes.last!) else { return false }
        return bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }

    /// AWS's regional endpoint, used when no endpoint is configured.
    public static func defaultEndpoint(region: String) -> String { "https://s3.\(region).amazonaws.com" }

    /// Path-style addressing is chosen for an endpoint whose host is an IP address or
    /// `localhost`: no DNS name exists there for `BUCKET.host`.
    public static func needsPathStyle(host: String) -> Bool {
        if host == "localhost" || host.hasPrefix("[") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }

    /// The HTTP URL template of the objects: `ENDPOINT/BUCKET/PREFIX` (path-style) or
    /// `scheme://BUCKET.host/PREFIX` (virtual-hosted). `endpoint` is `scheme://host[:port]`.
    /// `host` is what `{host}` stands for (`URLTemplate`).
    public func urlTemplate(endpoint origin: HTTPOrigin, pathStyle: Bool, host: String = "") -> URLTemplate {
        let defaultPort = origin.scheme == "https" ? 443 : 80
        let port = origin.port == defaultPort ? "" : ":\(origin.port)"
        let prefix = S3Target.encodeKeyTemplate(keyTemplate)
        let base = pathStyle
            ? "\(origin.scheme)://\(origin.host)\(port)/\(bucket)/"
            : "\(origin.scheme)://\(bucket).\(origin.host)\(port)/"
        return URLTemplate(base + prefix, host: host)
    }

    /// The prefix percent-encoded like a key, its placeholders left for `URLTemplate`.
    static func encodeKeyTemplate(_ template: String) -> String {
        URLTemplate.tokens(template).map { token in
            switch token {
            case .placeholder(let word) where URLTemplate.placeholders.contains(String(word)): "{\(word)}"
            case .placeholder(let word): URLTemplate.encodePath("{\(word)}")
            case .literal(let text): URLTemplate.encodePath(String(text))
            }
        }.joined()
    }
}
