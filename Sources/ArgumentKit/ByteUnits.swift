/// How a size option reads its unit: the two conventions spoold's options follow. Whole numbers
/// of ASCII digits only (no sign, fraction or space); nil for anything else, overflow included.
public enum ByteUnits: Sendable {
    /// `500000`, `10K`, `200M`, `1G`, `2T` (powers of 1000) or `64KiB`, `512MiB`, `2GiB`, `1TiB`
    /// (powers of 1024); a bare `B` suffix is allowed; case matters (`--max-spool-size`).
    case decimalOrBinary
    /// `1000`, `500K`, `2M`, `1G` in either case, all powers of 1024, as curl's own `--limit-rate`.
    case binaryLetters

    private var suffixes: [(suffix: String, factor: Int64)] {
        switch self {
        case .decimalOrBinary:
            [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40),
             ("K", 1_000), ("M", 1_000_000), ("G", 1_000_000_000), ("T", 1_000_000_000_000), ("B", 1)]
        case .binaryLetters:
            [("K", 1 << 10), ("k", 1 << 10), ("M", 1 << 20), ("m", 1 << 20), ("G", 1 << 30), ("g", 1 << 30)]
        }
    }

    /// The number of bytes `text` says.
    public func parse(_ text: String) -> Int64? {
        var digits = Substring(text)
        var factor: Int64 = 1
        for unit in suffixes where digits.hasSuffix(unit.suffix) {
            digits = digits.dropLast(unit.suffix.count)
            factor = unit.factor
            break
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int64(digits) else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: factor)
        return overflow ? nil : product
    }
}
