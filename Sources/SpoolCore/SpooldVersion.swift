/// spoold's version: printed by `spoold --version` and sent in every request's `User-Agent`, so
/// a server's log names the release that uploaded. Defined once, here.
public enum SpooldVersion {
    public static let current = "0.1.0"
    /// The date of this version (YYYY-MM-DD), for the manual pages (`.Dd`): set with `current`, so
    /// that generating the pages again changes nothing until the next version.
    public static let date = "2026-11-26"

    /// `spoold/0.1.0`.
    public static var userAgent: String { "spoold/\(current)" }
}
