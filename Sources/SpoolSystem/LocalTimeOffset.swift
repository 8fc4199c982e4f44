import Glibc

/// The local zone's offset from UTC at an instant, summer time included, as the C library reads
/// it (`localtime_r(3)`'s `tm_gmtoff`, from `TZ` or `/etc/localtime`): what the timetables of
/// `--limit-rate` and `--upload-window` are read in. glibc reads the zone once: a daemon picks up
/// a changed `/etc/localtime` when it starts again.
public enum LocalTimeOffset {
    /// Reads the zone (`tzset(3)`) before the first conversion; called once at start.
    public static func load() { tzset() }

    /// Seconds east of UTC in force at `secondsSinceEpoch` (0 if the C library cannot say).
    public static func secondsEast(atSecondsSinceEpoch seconds: Int64) -> Int {
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return 0 }
        return parts.tm_gmtoff
    }
}
