/// Byte counts as people read them: `512 B`, `3.1 MiB` (binary units, one decimal, rounded).
/// One formatter for `status`, `ls`, `show` and the drain progress line.
public enum ByteText {
    public static func format(_ count: Int64) -> String {
        if count < 1024 { return "\(count) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
