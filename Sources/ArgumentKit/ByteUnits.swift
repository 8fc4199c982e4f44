/// The one way every size option reads its value (`--max-spool-size`, `--limit-rate`,
/// `--s3-part-size`): a whole number of bytes, optionally followed by a unit that is a power of
/// 1024, as curl's `--limit-rate` and rclone's sizes read them.
///
/// - `K`, `M`, `G`, `T` (either case): KiB, MiB, GiB, TiB. `KiB`, `MiB`, `GiB`, `TiB` (either case)
///   say the same explicitly, and a bare `B` means bytes: `500000`, `500000B`, `64K`, `64KiB`,
///   `2G`, `2GiB` all parse.
/// - `KB`, `MB`, `GB`, `TB` are refused as ambiguous (powers of 1000 to some tools, of 1024 to
///   others), with a message saying what to write instead.
/// - ASCII digits only: no sign, fraction, exponent or space; overflow is refused.
public enum ByteUnits {
    public enum Problem: Error, Equatable, Sendable {
        /// Not a number with a known unit.
        case notASize
        /// `5MB`: a decimal-looking unit; the associated text is what to write instead (`5M`).
        case ambiguous(suggestion: String)
        /// More than `Int64` holds.
        case tooLarge
    }

    /// The units, longest suffix first, compared without regard to case.
    private static let units: [(suffix: String, factor: Int64)] = [
        ("kib", 1 << 10), ("mib", 1 << 20), ("gib", 1 << 30), ("tib", 1 << 40),
        ("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30), ("t", 1 << 40), ("b", 1),
    ]

    /// The number of bytes `text` says.
    public static func parse(_ text: String) -> Result<Int64, Problem> {
        let lower = text.lowercased()
        var digits = Substring(lower)
        var factor: Int64 = 1
        for unit in units where digits.hasSuffix(unit.suffix) {
            digits = digits.dropLast(unit.suffix.count)
            factor = unit.factor
            // `5MB`: the `B` was taken as the unit, and an `M` is left before it.
            if unit.suffix == "b", let letter = digits.last, "kmgt".contains(letter) {
                let number = text.dropLast(2)
                return .failure(isDigits(number) ? .ambiguous(suggestion: number + String(letter).uppercased()) : .notASize)
            }
            break
        }
        guard isDigits(digits) else { return .failure(.notASize) }
        guard let value = Int64(digits) else { return .failure(.tooLarge) }
        let (product, overflow) = value.multipliedReportingOverflow(by: factor)
        return overflow ? .failure(.tooLarge) : .success(product)
    }

    /// `bytes` as an operator would write it back, exactly: `5 MiB` when it is a whole number of
    /// a unit, else `5242881 B`. For errors and the daemon's start-up line.
    public static func exactText(_ bytes: Int64) -> String {
        for (name, factor) in [("TiB", Int64(1) << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        where bytes != 0 && bytes % factor == 0 {
            return "\(bytes / factor) \(name)"
        }
        return "\(bytes) B"
    }

    /// `bytes` as one gives it on the command line, exactly: `16M` when it is a whole number of a
    /// unit, else the number of bytes. For a size option's default in its help.
    public static func shortText(_ bytes: Int64) -> String {
        for (name, factor) in [("T", Int64(1) << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)]
        where bytes != 0 && bytes % factor == 0 {
            return "\(bytes / factor)\(name)"
        }
        return "\(bytes)"
    }

    /// What every size option's help says about its units.
    public static let rule = "K, M, G, T: powers of 1024, also written KiB, MiB, GiB, TiB"

    private static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }
}
