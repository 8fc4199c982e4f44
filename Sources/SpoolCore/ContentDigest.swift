/// The `Content-Digest` request header of RFC 9530, over the exact bytes of the body sent.
public enum ContentDigest: String, Equatable, Sendable, CaseIterable {
    /// `sha-256=:<base64 of the 32-byte digest>:` (a structured-field byte sequence).
    case sha256 = "sha-256"

    public static let headerName = "Content-Digest"

    /// The header value for a finished digest of this algorithm.
    public func headerValue(digest: [UInt8]) -> String {
        "\(rawValue)=:\(Base64.encode(digest)):"
    }
}
