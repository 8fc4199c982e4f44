import Glibc

/// The machine's host name (`gethostname(2)`), for the `{host}` of `--url`: read once at start,
/// so a daemon's items all go under one name.
public enum HostName {
    /// The name, or "" if it cannot be read (the daemon refuses `{host}` then).
    public static func current() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
