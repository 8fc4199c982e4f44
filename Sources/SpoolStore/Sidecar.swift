import Foundation
import SpoolCore

/// Optional per-item settings dropped beside a file: `incoming/<name>.meta.json`.
///
/// ```json
/// {"contentType": "image/jpeg", "headers": {"X-Camera": "7"}, "fields": {"caption": "fox"},
///  "url": "https://example.org/cams/7/"}
/// ```
/// Unknown keys are an error, so that a typo is reported instead of silently ignored.
public struct Sidecar: Equatable, Sendable {
    public var contentType: String?
    public var headers: [String: String]
    public var fields: [String: String]
    /// The item's own upload URL; the daemon uses it only if an `--allow-url` prefix admits it.
    public var url: String?

    public init(
        contentType: String? = nil, headers: [String: String] = [:], fields: [String: String] = [:], url: String? = nil
    ) {
        self.contentType = contentType
        self.headers = headers
        self.fields = fields
        self.url = url
    }

    public static func parse(_ bytes: [UInt8]) throws -> Sidecar {
        guard bytes.count <= SmallText.maximumBytes else { throw MetadataError("sidecar is larger than \(SmallText.maximumBytes) bytes") }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw MetadataError("sidecar is not a JSON object")
        }
        var sidecar = Sidecar()
        for (key, value) in object {
            switch key {
            case "contentType":
                guard let s = value as? String, !s.isEmpty else { throw MetadataError("sidecar 'contentType' must be a string") }
                if let problem = HeaderRule.valueProblem(s) {
                    throw MetadataError("sidecar 'contentType' cannot be sent as a Content-Type header: \(problem)")
                }
                sidecar.contentType = s
            case "headers":
                sidecar.headers = try stringMap(value, key: key)
                var seen = Set<String>()
                for (name, v) in sidecar.headers {
                    if let problem = HeaderRule.problem(name: name, value: v) {
                        throw MetadataError("sidecar header '\(HeaderRule.printable(name))' is not a valid HTTP header: \(problem)")
                    }
                    // Which spelling would win is undefined: one field per name (`HeaderFields`).
                    guard seen.insert(name.lowercased()).inserted else {
                        throw MetadataError("sidecar header '\(name)' is given twice (header names ignore case)")
                    }
                }
            case "fields": sidecar.fields = try stringMap(value, key: key)
            case "url":
                guard let s = value as? String, HTTPOrigin(s) != nil else {
                    throw MetadataError("sidecar 'url' must be an absolute http:// or https:// URL")
                }
                sidecar.url = s
            default: throw MetadataError("sidecar has an unknown key '\(key)' (allowed: contentType, headers, fields, url)")
            }
        }
        return sidecar
    }

    private static func stringMap(_ value: Any, key: String) throws -> [String: String] {
        guard let map = value as? [String: Any] else { throw MetadataError("sidecar '\(key)' must be an object of strings") }
        var out: [String: String] = [:]
        for (k, v) in map {
            guard let s = v as? String else { throw MetadataError("sidecar '\(key).\(k)' must be a string") }
            out[k] = s
        }
        return out
    }
}
