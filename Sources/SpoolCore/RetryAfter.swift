/// Reads an HTTP `Retry-After` value: delta-seconds or an HTTP-date (RFC 9110 section 10.2.3, the
/// date in any of the three forms of section 5.6.7), without Foundation.
public enum RetryAfter {
    /// Seconds to wait from `now`, or nil when the value is neither form.
    public static func seconds(from value: String, now: Timestamp) -> Double? {
        let trimmed = value.trimmingSpacesAndTabs
        if !trimmed.isEmpty, trimmed.allSatisfy(\.isASCIIDigit) {
            return trimmed.count <= 12 ? Double(trimmed) : nil
        }
        guard let date = httpDate(trimmed, now: now) else { return nil }
        return max(0, now.seconds(until: date))
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate), `Sunday, 06-Nov-94 08:49:37 GMT` (RFC 850,
    /// its year taken in the century that puts it at most 50 years ahead of `now`), or
    /// `Sun Nov  6 08:49:37 1994` (asctime); the weekday is not checked.
    public static func httpDate(_ text: String, now: Timestamp) -> Timestamp? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        if words.count == 6, words[0].hasSuffix(","), words[5] == "GMT" {
            return date(year: Int(words[3]), month: words[2], day: Int(words[1]), time: words[4], digits: 4)
        }
        if words.count == 4, words[0].hasSuffix(","), words[3] == "GMT" {
            let parts = words[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, parts[2].count == 2, let yy = Int(parts[2]) else { return nil }
            let thisYear = CivilTime(now).year
            var year = thisYear - thisYear % 100 + yy
            if year > thisYear + 50 { year -= 100 }
            return date(year: year, month: parts[1], day: Int(parts[0]), time: words[2], digits: 4)
        }
        if words.count == 5, !words[0].hasSuffix(",") {
            return date(year: Int(words[4]), month: words[1], day: Int(words[2]), time: words[3], digits: 4)
        }
        return nil
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func date(year: Int?, month: String, day: Int?, time: String, digits: Int) -> Timestamp? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard let year, (1...9999).contains(year), let month = months.firstIndex(of: month), let day, (1...31).contains(day),
              clock.count == 3, let hour = clock[0], let minute = clock[1], let second = clock[2],
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        return CivilTime(year: year, month: month + 1, day: day, hour: hour, minute: minute, second: second, millisecond: 0).timestamp
    }
}

extension String {
    /// Without spaces and tabs at either end (a header value's optional white space).
    var trimmingSpacesAndTabs: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}

extension Character {
    var isASCIIDigit: Bool { self >= "0" && self <= "9" }
}
