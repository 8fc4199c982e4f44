/// A size given on the command line: `500000`, `10K`, `200M`, `1G` (powers of 1000) or `64KiB`,
/// `512MiB`, `2GiB` (powers of 1024). Whole numbers only; a bare `B` suffix is allowed.
public enum ByteCount {
    private static let units: [(suffix: String, factor: Int64)] = [
        ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40),
        ("K", 1_000), ("M", 1_000_000), ("G", 1_000_000_000), ("T", 1_000_000_000_000), ("B", 1),
    ]

    /// nil for anything else (spaces, fractions, signs, unknown suffixes, overflow).
    public static func parse(_ text: String) -> Int64? {
        var digits = Substring(text)
        var factor: Int64 = 1
        for unit in units where digits.hasSuffix(unit.suffix) {
            digits = digits.dropLast(unit.suffix.count)
            factor = unit.factor
            break
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int64(digits) else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: factor)
        return overflow ? nil : product
    }
}
