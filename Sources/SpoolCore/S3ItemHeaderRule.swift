/// Which of an item's own headers (a sidecar's, `enqueue --header`'s) an S3 upload may send.
///
/// Every `x-amz-*` header of a request is signed with the daemon's credentials, so an item
/// header there is the daemon's key acting: `x-amz-copy-source` turns the upload into a
/// CopyObject of any object the key can read, `x-amz-acl` or a grant publishes the object,
/// object-lock and SSE-C headers bind it. A producer decides what its object is, not what the
/// key may do: by default an item may set only `x-amz-meta-*`, `Content-Type` and
/// `Content-Disposition`. The storage class is the operator's too (it sets the bill, the
/// minimum storage time, and for the archive classes whether the object can be read at all
/// without a restore). Anything else only when the operator names it with `--s3-allow-header`;
/// `x-amz-copy-source*` never, whoever asks. Headers the operator gives (`--header`,
/// `--header-file`) are not item headers and are not limited here (except `x-amz-copy-source*`).
public struct S3ItemHeaderRule: Equatable, Sendable {
    /// What an item may always set: exact names, and prefixes ending in `*`.
    public static let producerHeaders = ["x-amz-meta-*", "content-type", "content-disposition"]
    /// Never sent on an S3 upload, from any source: they make the request copy another object.
    public static let neverSent = "x-amz-copy-source*"

    /// The operator's additions (`--s3-allow-header`), lowercased: names, or prefixes ending in `*`.
    public private(set) var allowed: [String]

    /// - Throws: `HeaderRule.Refusal` for a pattern that is not a header name (an optional `*`
    ///   at its end), or one that would allow `x-amz-copy-source*`.
    public init(allowing patterns: [String] = []) throws {
        allowed = []
        for pattern in patterns {
            let lowercased = pattern.lowercased()
            let name = lowercased.hasSuffix("*") ? String(lowercased.dropLast()) : lowercased
            if let problem = name.isEmpty ? "it is empty" : HeaderRule.nameProblem(name) {
                throw HeaderRule.Refusal("'\(LogEscaping.line(pattern))' is not a header name or a prefix ending in '*': \(problem)")
            }
            // `x-amz-*` and `x-amz-copy*` would take the copy-source headers in: refused as such.
            if S3ItemHeaderRule.matches(S3ItemHeaderRule.neverSent, lowercased) || S3ItemHeaderRule.matches(lowercased, "x-amz-copy-source") {
                throw HeaderRule.Refusal("'\(pattern)' would allow x-amz-copy-source, which spoold never sends (it makes the upload copy another object)")
            }
            allowed.append(lowercased)
        }
    }

    /// Why an item may not send header `name`, or nil.
    public func refusal(for name: String) -> String? {
        let lowercased = name.lowercased()
        if let never = S3ItemHeaderRule.neverProblem(name) { return never }
        if S3ItemHeaderRule.producerHeaders.contains(where: { S3ItemHeaderRule.matches($0, lowercased) }) { return nil }
        if allowed.contains(where: { S3ItemHeaderRule.matches($0, lowercased) }) { return nil }
        return "header '\(HeaderRule.printable(name))' is not one an item may set on an S3 upload (x-amz-meta-*, Content-Type, "
            + "Content-Disposition; the operator may allow more with --s3-allow-header)"
    }

    /// The first of an item's headers it may not send (in name order), or nil.
    public func refusal(forHeaders headers: [String: String]) -> String? {
        for name in headers.keys.sorted() { if let refusal = refusal(for: name) { return refusal } }
        return nil
    }

    /// Why `name` is never sent on an S3 request, whoever gives it, or nil.
    public static func neverProblem(_ name: String) -> String? {
        guard matches(neverSent, name.lowercased()) else { return nil }
        return "header '\(name)' is never sent to S3: it would make the upload copy another object"
    }

    /// Whether `pattern` (a lowercased name, or a prefix ending in `*`) covers lowercased `name`.
    static func matches(_ pattern: String, _ name: String) -> Bool {
        pattern.hasSuffix("*") ? name.hasPrefix(pattern.dropLast()) : name == pattern
    }
}
