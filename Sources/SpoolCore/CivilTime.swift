/// A UTC calendar date and time, converted to and from `Timestamp` without Foundation.
///
/// Uses Howard Hinnant's days-from-civil algorithms (proleptic Gregorian calendar).
public struct CivilTime: Equatable, Sendable {
    public var year, month, day, hour, minute, second, millisecond: Int

    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int) {
        (self.year, self.month, self.day) = (year, month, day)
        (self.hour, self.minute, self.second, self.millisecond) = (hour, minute, second, millisecond)
    }

    public init(_ timestamp: Timestamp) {
        let ms = timestamp.millisecondsSinceEpoch
        var days = ms / 86_400_000
        var rest = ms % 86_400_000
        if rest < 0 { rest += 86_400_000; days -= 1 }
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        self.init(
            year: Int(y), month: Int(m), day: Int(d),
            hour: Int(rest / 3_600_000), minute: Int(rest / 60_000 % 60), second: Int(rest / 1000 % 60),
            millisecond: Int(rest % 1000))
    }

    public var timestamp: Timestamp {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let ms = ((days * 24 + Int64(hour)) * 60 + Int64(minute)) * 60_000 + Int64(second) * 1000 + Int64(millisecond)
        return Timestamp(millisecondsSinceEpoch: ms)
    }
}
