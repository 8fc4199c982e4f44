/// A duration for log lines: `250 ms`, `2.5 s`, `40 s`, `12 min`, `3 h`.
func formatSeconds(_ seconds: Double) -> String {
    if seconds < 1 { return "\(Int(seconds * 1000)) ms" }
    if seconds < 10 { return "\(Double(Int(seconds * 10)) / 10) s" }
    if seconds < 120 { return "\(Int(seconds)) s" }
    if seconds < 7200 { return "\(Int(seconds / 60)) min" }
    return "\(Int(seconds / 3600)) h"
}
