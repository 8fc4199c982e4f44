/// An AWS access key (and, for temporary credentials, its session token): what SigV4 signs with.
///
/// Read at start-up from the environment or the shared credentials file and kept only in memory;
/// `description` never shows the secret or the token, so a stray interpolation cannot log them.
public struct AWSCredentials: Equatable, Sendable, CustomStringConvertible {
    public var accessKeyID: String
    public var secretAccessKey: String
    /// `AWS_SESSION_TOKEN` / `aws_session_token`: sent as `x-amz-security-token` when set.
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        (self.accessKeyID, self.secretAccessKey, self.sessionToken) = (accessKeyID, secretAccessKey, sessionToken)
    }

    public var description: String { "AWSCredentials(\(accessKeyID), secret hidden)" }

    /// The environment variables credentials are read from; withheld from hooks, so a secret
    /// never leaves spoold's memory.
    public static let environmentVariables = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]

    /// The keys of `[profile]` in a shared credentials file (`~/.aws/credentials`, INI style:
    /// `[name]` sections, `key = value` lines, `#`/`;` comments). Nil when the profile is absent.
    /// Values are not checked here: a profile without both keys is reported by the caller.
    public static func sharedFileProfile(_ text: String, profile: String) -> [String: String]? {
        var current: String?
        var found: [String: String]?
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = rawLine.trimmingCharacters(in: " \t\r")
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                var name = String(line.dropFirst().dropLast()).trimmingCharacters(in: " \t")
                // The config file's spelling, accepted in the credentials file by the AWS CLI too.
                if name.hasPrefix("profile ") { name = String(name.dropFirst(8)).trimmingCharacters(in: " \t") }
                current = name
                if name == profile, found == nil { found = [:] }
                continue
            }
            guard current == profile, let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals]).trimmingCharacters(in: " \t").lowercased()
            let value = String(line[line.index(after: equals)...]).trimmingCharacters(in: " \t")
            found?[key] = value
        }
        return found
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let drop: (Character) -> Bool = { set.contains($0) }
        guard let first = firstIndex(where: { !drop($0) }) else { return "" }
        let last = lastIndex(where: { !drop($0) })!
        return String(self[first...last])
    }
}
