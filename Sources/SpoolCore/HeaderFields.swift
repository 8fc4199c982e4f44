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
