/// Which HTTP redirects an upload follows: docs/http.md "Redirects".
///
/// Only 307 and 308 keep the method and the body (RFC 9110 §15.4), so only they are followed,
/// and only to the same origin (scheme, host, port) or to a host the operator allowed, never
/// from https down to http. 301, 302 and 303 would turn PUT/POST into GET, so they are refused.
public struct RedirectPolicy: Equatable, Sendable {
    public static let maximumHops = 5

    /// Hosts (lower-cased) a redirect may go to besides the original origin (`--allow-redirect-host`).
    public var allowedHosts: Set<String>

    public init(allowedHosts: Set<String> = []) {
        self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
    }

    public enum Decision: Equatable, Sendable {
        /// Send the same request again to this absolute URL.
        case follow(String)
        /// Stop: the item fails with this reason.
        case refuse(String)
        /// Not a redirect spoold acts on: classify the status as usual.
        case notARedirect
    }

    /// - Parameters:
    ///   - from: the absolute URL that answered.
    ///   - location: the `Location` header, already resolved against `from` (nil when absent).
    ///   - hopsSoFar: redirects already followed for this attempt.
    public func decide(status: Int, method: String, from: String, location: String?, hopsSoFar: Int) -> Decision {
        switch status {
        case 301, 302, 303:
            return .refuse("redirect \(status) to \(location ?? "(no Location)") not followed: it would turn \(method) into GET")
        case 307, 308:
            break
        default:
            return .notARedirect
        }
        guard let location else { return .refuse("redirect \(status) without a Location header") }
        guard let target = HTTPOrigin(location) else {
            return .refuse("redirect \(status) to '\(location)' refused: not an http(s) URL")
        }
        guard hopsSoFar < RedirectPolicy.maximumHops else {
            return .refuse("more than \(RedirectPolicy.maximumHops) redirects")
        }
        guard let origin = HTTPOrigin(from) else { return .refuse("redirect from an unparsable URL '\(from)'") }
        if origin.scheme == "https" && target.scheme == "http" {
            return .refuse("redirect \(status) to \(location) refused: it leaves https")
        }
        if target == origin || allowedHosts.contains(target.host) { return .follow(location) }
        return .refuse(
            "redirect \(status) to another origin (\(target)) refused; allow it with --allow-redirect-host \(target.host)")
    }
}
