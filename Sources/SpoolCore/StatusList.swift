/// A set of HTTP statuses given on the command line (`--retry-on 404,409`), validated.
///
/// Entries are decimal statuses from 100 to 599 separated by commas (spaces around an entry are
/// allowed). A 2xx is refused: a 2xx answer is success, and `--success-json` is the way to
/// judge one by its body.
public struct StatusList: Equatable, Sendable {
    public private(set) var statuses: Set<Int>

    public init(_ statuses: Set<Int> = []) {
        self.statuses = statuses
    }

    /// Why a status list was refused; `entry` is the offending text, as given.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var entry: String
        public var problem: String
        public var description: String { "'\(entry)' \(problem)" }
    }

    /// Parses one or more comma-separated lists (a repeated option gives several).
    public static func parse(_ texts: [String]) throws(ParseError) -> StatusList {
        var statuses = Set<Int>()
        for text in texts {
            for raw in text.split(separator: ",", omittingEmptySubsequences: false) {
                let entry = trimmed(raw)
                guard !entry.isEmpty else {
                    throw ParseError(entry: text, problem: "has an empty entry")
                }
                guard entry.utf8.count <= 3, entry.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                      let status = Int(entry), (100...599).contains(status)
                else {
                    throw ParseError(entry: entry, problem: "is not an HTTP status (100-599)")
                }
                guard !(200...299).contains(status) else {
                    throw ParseError(entry: entry, problem: "is a success status (use --success-json to judge a 2xx answer by its body)")
                }
                statuses.insert(status)
            }
        }
        return StatusList(statuses)
    }

    public func contains(_ status: Int) -> Bool { statuses.contains(status) }

    /// The statuses in ascending order, comma-separated (for logs and errors).
    public var text: String { statuses.sorted().map(String.init).joined(separator: ",") }

    private static func trimmed(_ text: Substring) -> String {
        var scalars = text.unicodeScalars[...]
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
