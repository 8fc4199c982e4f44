/// What only the libcurl transport offers: a private CA, HTTP/2.
public struct CurlOptions: Sendable, Equatable {
    /// A PEM bundle of CAs to trust instead of the system's (`--cacert`, CURLOPT_CAINFO).
    public var caFile: String?
    /// A directory of hashed CA certificates (`--capath`, CURLOPT_CAPATH).
    public var caPath: String?
    /// HTTPS over HTTP/2 where the server offers it (ALPN), the uploads multiplexed over one
    /// connection: measured faster for small items (docs/http.md "Transports"). False (`--http1.1`):
    /// HTTP/1.1 always, whatever libcurl's own default.
    public var http2: Bool

    public init(caFile: String? = nil, caPath: String? = nil, http2: Bool = true) {
        (self.caFile, self.caPath, self.http2) = (caFile, caPath, http2)
    }
}
