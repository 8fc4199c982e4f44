/// spoold's version: printed by `spoold --version` and sent in every request's `User-Agent`, so
/// a server's log names the release that uploaded. Defined once, here.
public enum SpooldVersion {
    public static let current = "0.1.0"

    /// `spoold/0.1.0`.
    public static var userAgent: String { "spoold/\(current)" }
}
