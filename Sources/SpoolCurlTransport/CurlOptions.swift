/// What only the libcurl transport offers: a private CA, a client certificate, HTTP/2.
public struct CurlOptions: Sendable, Equatable {
    /// A PEM bundle of CAs to trust instead of the system's (`--cacert`, CURLOPT_CAINFO).
    public var caFile: String?
    /// A directory of hashed CA certificates (`--capath`, CURLOPT_CAPATH).
    public var caPath: String?
    /// HTTPS over HTTP/2 where the server offers it (ALPN), the uploads multiplexed over one
    /// connection: measured faster for small items (docs/http.md "Transports"). False (`--http1.1`):
    /// HTTP/1.1 always, whatever libcurl's own default.
    public var http2: Bool
    /// The client certificate shown to servers that ask for one (`--cert`, PEM, CURLOPT_SSLCERT).
    public var clientCertificate: String?
    /// Its private key (`--key`, PEM, CURLOPT_SSLKEY); nil: in the certificate's file.
    public var clientKey: String?

    public init(caFile: String? = nil, caPath: String? = nil, http2: Bool = true, clientCertificate: String? = nil, clientKey: String? = nil) {
        (self.caFile, self.caPath, self.http2) = (caFile, caPath, http2)
        (self.clientCertificate, self.clientKey) = (clientCertificate, clientKey)
    }
}
