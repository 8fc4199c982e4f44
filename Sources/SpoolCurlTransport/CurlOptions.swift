/// What only the libcurl transport offers: a private CA and a bandwidth limit.
public struct CurlOptions: Sendable, Equatable {
    /// A PEM bundle of CAs to trust instead of the system's (`--cacert`, CURLOPT_CAINFO).
    public var caFile: String?
    /// A directory of hashed CA certificates (`--capath`, CURLOPT_CAPATH).
    public var caPath: String?
    /// Upload bytes per second for the whole daemon (`--limit-rate`); nil: unlimited.
    public var limitRate: Int64?

    public init(caFile: String? = nil, caPath: String? = nil, limitRate: Int64? = nil) {
        (self.caFile, self.caPath, self.limitRate) = (caFile, caPath, limitRate)
    }
}
