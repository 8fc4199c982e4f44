/// HTTP header fields keyed by name as given, where names are case-insensitive (RFC 9110): one
/// set under any spelling replaces every other spelling, so a later source wins whole instead of
/// both going on the wire (`--header 'authorization: …'` and a sidecar's `Authorization`).
public enum HeaderFields {
    /// Sets `name` to `value`, removing the field under any other spelling of the name.
    public static func set(_ name: String, _ value: String, in fields: inout [String: String]) {
        let lowercased = name.lowercased()
        for key in fields.keys where key != name && key.lowercased() == lowercased { fields[key] = nil }
        fields[name] = value
    }

    /// `fields` with every field of `overrides` set over it (`set`).
    public static func merging(_ fields: [String: String], _ overrides: [String: String]) -> [String: String] {
        var merged = fields
        for (name, value) in overrides { set(name, value, in: &merged) }
        return merged
    }
}

extension HeaderFields {
    /// Header names whose values are credentials: an item's own header never replaces one the
    /// operator configured (`--header Authorization: ...`), and their values are kept out of
    /// what spoold stores (`SecretRedaction`).
    public static let credentialNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "x-api-key", "x-auth-token",
    ]

    public static func isCredential(_ name: String) -> Bool { credentialNames.contains(name.lowercased()) }

    /// The headers of one request, by precedence: the operator's (`--header`); the item's own
    /// (its sidecar, `enqueue --header`) over them, except a credential the operator gave; the
    /// operator's secrets (`--header-file`, `--header-env`) over everything. A producer can add
    /// headers, never speak for the operator's credentials.
    public static func request(
        operator configured: [String: String], item: [String: String], secrets: [String: String]
    ) -> [String: String] {
        let kept = Set(configured.keys.filter(isCredential).map { $0.lowercased() })
        var merged = configured
        for (name, value) in item where !kept.contains(name.lowercased()) { set(name, value, in: &merged) }
        for (name, value) in secrets { set(name, value, in: &merged) }
        return merged
    }
}
