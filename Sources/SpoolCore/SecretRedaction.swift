/// Keeps configured secrets out of what spoold stores for people to read: an answer that echoes
/// the request (`{"error": "bad token", "authorization": "Bearer ..."}`) would otherwise put the
/// `--header-file` credential into the item's json, where `spoold show` prints it.
///
/// The secrets are values, not names: the operator's secret headers (`--header-file`,
/// `--header-env`), every credential header the operator or the item gives
/// (`HeaderFields.credentialNames`), and the S3 secret key and session token. Each is replaced by
/// `REDACTED` wherever it appears, and so is its token alone (`Bearer abc` → `abc`), and a piece
/// of it that an excerpt's end cut short. Values under `minimumLength` characters are left
/// alone: they would match ordinary text.
public struct SecretRedaction: Sendable, Equatable {
    public static let minimumLength = 6
    /// The shortest end of an excerpt taken for a secret cut short there.
    static let minimumTail = 4

    /// Longest first, so a secret that contains another is replaced whole.
    public private(set) var secrets: [String]

    public init(_ values: [String] = []) {
        var found = Set<String>()
        for value in values {
            for part in SecretRedaction.parts(of: value) where part.count >= SecretRedaction.minimumLength { found.insert(part) }
        }
        secrets = found.sorted { $0.count != $1.count ? $0.count > $1.count : $0 < $1 }
    }

    /// The credential values among `headers` (every value when `all`: the operator's secret headers).
    public static func values(of headers: [String: String], all: Bool = false) -> [String] {
        headers.filter { all || HeaderFields.isCredential($0.key) }.map(\.value)
    }

    /// These secrets and `more`.
    public func adding(_ more: [String]) -> SecretRedaction {
        more.isEmpty ? self : SecretRedaction(secrets + more)
    }

    public var isEmpty: Bool { secrets.isEmpty }

    /// `text` with every secret, and a secret's beginning at its very end, replaced.
    public func redact(_ text: String) -> String {
        guard !secrets.isEmpty else { return text }
        var out = text
        for secret in secrets where out.contains(secret) { out = out.replacing(secret, with: LogRedaction.placeholder) }
        for secret in secrets {
            var length = min(secret.count - 1, out.count)
            while length >= SecretRedaction.minimumTail {
                if out.hasSuffix(secret.prefix(length)) {
                    out = String(out.dropLast(length)) + LogRedaction.placeholder
                    break
                }
                length -= 1
            }
        }
        return out
    }

    /// `outcome` with its texts (the answer's excerpt, the error, a refusal, an unmet success
    /// rule) redacted: what the attempt history, the log and the hooks get.
    public func redact(_ outcome: UploadOutcome) -> UploadOutcome {
        guard !secrets.isEmpty else { return outcome }
        return outcome.mapTexts(redact)
    }

    /// A value and, for `Scheme token` (`Bearer`, `Basic`...), the token alone.
    static func parts(of value: String) -> [String] {
        let trimmed = value.trimmingSpaces
        guard let space = trimmed.firstIndex(of: " ") else { return [trimmed] }
        return [trimmed, String(trimmed[trimmed.index(after: space)...]).trimmingSpaces]
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
