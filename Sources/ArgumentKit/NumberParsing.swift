/// Reads option values as numbers, strictly: ASCII digits only, no exponents, no `inf`/`nan`,
/// no surrounding spaces. A value that almost parses is more likely a mistake than an intent.
enum NumberParsing {
    enum Failure: Error, Equatable {
        case notANumber
        case outOfRange
        case negative
    }

    /// `[+-]?[0-9]+`, within `Int`'s range.
    static func integer(_ text: String) -> Result<Int, Failure> {
        var digits = Substring(text)
        if digits.first == "+" || digits.first == "-" { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.allSatisfy(isASCIIDigit) else { return .failure(.notANumber) }
        guard let value = Int(text) else { return .failure(.outOfRange) }
        return .success(value)
    }

    /// `[0-9]*(.[0-9]*)?` with at least one digit, then optionally `ms`, `s`, `m` or `h`.
    static func seconds(_ text: String) -> Result<Double, Failure> {
        if text.hasPrefix("-") {
            if case .success = seconds(String(text.dropFirst())) { return .failure(.negative) }
            return .failure(.notANumber)
        }
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(text)
        var multiplier = 1.0
        for unit in units where number.hasSuffix(unit.suffix) {
            number = number.dropLast(unit.suffix.count)
            multiplier = unit.seconds
            break
        }
        guard number.contains(where: isASCIIDigit),
              number.allSatisfy({ isASCIIDigit($0) || $0 == "." }),
              number.filter({ $0 == "." }).count <= 1,
              let value = Double(String(number))
        else { return .failure(.notANumber) }
        let seconds = value * multiplier
        guard seconds.isFinite else { return .failure(.outOfRange) }
        return .success(seconds)
    }

    /// `60` rather than `60.0`, `0.5` as is: numbers as an operator would write them.
    static func shortDescription(_ value: Double) -> String {
        if value.magnitude < 1e15, value == Double(Int(value)) { return String(Int(value)) }
        return String(value)
    }

    private static func isASCIIDigit(_ character: Character) -> Bool {
        character.isASCII && character.isWholeNumber
    }
}
