/// The contents of an item's `.json` file: what the item is and what happened to it.
///
/// Part of the public on-disk protocol (docs/spool.md, "The .json file"): add fields, never rename them.
public struct ItemMetadata: Codable, Equatable, Sendable {
    public static let currentVersion = 1
    /// Metadata larger than this is not parsed (a hostile or broken file); the item is quarantined.
    public static let maximumEncodedSize = 1 << 20

    public var version: Int
    public var id: String
    /// The name the file had on the `enqueue` command line, or its path below `incoming/`; for a
    /// name that is not valid UTF-8, a readable form with each odd byte as `\xNN`.
    public var originalName: String
    /// Only for a name that is not valid UTF-8: its exact bytes, base64 (the URL is made from them).
    public var originalNameBytes: String?
    public var size: Int64
    public var contentType: String
    public var createdAt: String
    /// Extra request headers for this item (from `--header` or a sidecar).
    public var headers: [String: String]
    /// Form fields for multipart uploads (from `--field` or a sidecar).
    public var fields: [String: String]
    /// Every attempt so far, oldest first.
    public var attempts: [AttemptRecord]
    /// Why the item is in `failed/`, in words (bad sidecar, missing blob, the last attempt's error...).
    public var failureReason: String?
    /// Why the item is in `failed/`, as a code (`FailureCode`'s raw value): what tools read. Kept
    /// as written, so a code from a newer version survives; absent in jsons older versions wrote
    /// (`FailureClass` reads their `failureReason` then).
    public var failureCode: String?
    /// Set when an operator ran `spoold retry`: attempts before it no longer count.
    public var retriedAt: [String]?
    /// The item's own upload URL (sidecar `"url"`), used only if an `--allow-url` prefix admits it.
    public var url: String?

    public init(
        id: ItemID, originalName: String, size: Int64, contentType: String, createdAt: Timestamp,
        headers: [String: String] = [:], fields: [String: String] = [:]
    ) {
        self.version = ItemMetadata.currentVersion
        self.id = id.rawValue
        self.originalName = originalName
        self.size = size
        self.contentType = contentType
        self.createdAt = createdAt.iso8601
        self.headers = headers
        self.fields = fields
        self.attempts = []
        self.failureReason = nil
        self.failureCode = nil
        self.retriedAt = nil
        self.url = nil
        self.originalNameBytes = nil
    }

    public var lastAttempt: AttemptRecord? { attempts.last }

    /// Records why the item goes to `failed/` (both the code and the words).
    public mutating func setFailure(_ reason: FailureReason) {
        failureCode = reason.code.rawValue
        failureReason = reason.text
    }

    /// Clears the reason (`spoold retry`).
    public mutating func clearFailure() {
        failureCode = nil
        failureReason = nil
    }

    /// The time the URL's date parts are made from: `createdAt`, or the time in the id if an
    /// edit left `createdAt` unreadable. Never the clock, so every attempt gets the same URL.
    public var creationTime: Timestamp {
        Timestamp(iso8601: createdAt) ?? ItemID(id)?.createdAt ?? Timestamp(millisecondsSinceEpoch: 0)
    }
}
