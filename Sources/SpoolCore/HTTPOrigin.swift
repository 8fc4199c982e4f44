/// The origin of an absolute http(s) URL (RFC 6454): scheme, host and port, compared as a whole.
///
/// Parsed by hand because the core imports nothing; only what redirect and URL checks need.
public struct HTTPOrigin: Equatable, Sendable, CustomStringConvertible {
    public var scheme: String
    public var host: String
    public var port: Int

    /// nil unless `url` is an absolute `http://` or `https://` URL with a host.
    public init?(_ url: String) {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let scheme = url[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = url[url.index(after: colon)...]
        guard rest.hasPrefix("//") else { return nil }
        let authorityAndPath = rest.dropFirst(2)
        var authority = authorityAndPath.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = Substring(authority)
        var port = scheme == "https" ? 443 : 80
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            host = host[...close]
            if !after.isEmpty {
                guard after.first == ":", let p = Int(after.dropFirst()), (1...65535).contains(p) else { return nil }
                port = p
            }
        } else if let portColon = host.lastIndex(of: ":") {
            let digits = host[host.index(after: portColon)...]
            host = host[..<portColon]
            if !digits.isEmpty {
                guard let p = Int(digits), (1...65535).contains(p) else { return nil }
                port = p
            }
        }
        guard !host.isEmpty else { return nil }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
    }

    public var description: String { "\(scheme)://\(host):\(port)" }
}
