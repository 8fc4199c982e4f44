/// Builds a Prometheus text exposition (format 0.0.4), as node_exporter's textfile collector
/// reads it: one `# HELP` and `# TYPE` per family, then its samples.
public struct PrometheusText: Sendable {
    public private(set) var text = ""

    public init() {}

    public mutating func gauge(_ name: String, _ help: String, _ samples: [(labels: [(String, String)], value: Double)]) {
        family(name, "gauge", help)
        for sample in samples { line(name, sample.labels, sample.value) }
    }

    public mutating func gauge(_ name: String, _ help: String, _ value: Double) {
        gauge(name, help, [([], value)])
    }

    public mutating func counter(_ name: String, _ help: String, _ samples: [(labels: [(String, String)], value: Double)]) {
        family(name, "counter", help)
        for sample in samples { line(name, sample.labels, sample.value) }
    }

    public mutating func counter(_ name: String, _ help: String, _ value: Double) {
        counter(name, help, [([], value)])
    }

    /// `_bucket` lines (cumulative, ending with `le="+Inf"`), `_sum` and `_count`.
    public mutating func histogram(_ name: String, _ help: String, _ histogram: Histogram) {
        family(name, "histogram", help)
        var cumulative = 0
        for (bound, count) in zip(histogram.upperBounds, histogram.counts) {
            cumulative += count
            line(name + "_bucket", [("le", PrometheusText.number(bound))], Double(cumulative))
        }
        line(name + "_bucket", [("le", "+Inf")], Double(histogram.count))
        line(name + "_sum", [], histogram.sum)
        line(name + "_count", [], Double(histogram.count))
    }

    private mutating func family(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    private mutating func line(_ name: String, _ labels: [(String, String)], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(PrometheusText.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " " + PrometheusText.number(value) + "\n"
    }

    /// Integers without a fraction (`3`, not `3.0`); others as Swift prints them, which the
    /// format accepts (`0.25`, `1e-05`).
    public static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    static func escape(_ value: String) -> String {
        var out = ""
        for c in value {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }

    /// Observations counted in fixed buckets (each count is for its own bucket, not cumulative).
    public struct Histogram: Equatable, Sendable {
        public let upperBounds: [Double]
        public private(set) var counts: [Int]
        public private(set) var sum: Double = 0
        public private(set) var count = 0

        public init(upperBounds: [Double]) {
            self.upperBounds = upperBounds
            counts = Array(repeating: 0, count: upperBounds.count)
        }

        /// Adds one observation; one above every bound counts only in `+Inf`.
        public mutating func observe(_ value: Double) {
            if let index = upperBounds.firstIndex(where: { value <= $0 }) { counts[index] += 1 }
            sum += value
            count += 1
        }
    }
}
