/// Why an item goes to `failed/`: a code for tools and words for people.
public struct FailureReason: Equatable, Sendable, CustomStringConvertible {
    public var code: FailureCode
    public var text: String

    public init(_ code: FailureCode, _ text: String) {
        self.code = code
        self.text = text
    }

    public var description: String { text }
}
