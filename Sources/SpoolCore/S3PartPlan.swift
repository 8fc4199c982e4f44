/// How a blob is cut into the parts of one S3 multipart upload: equal parts (some stores require
/// them) of at least `minimumPartSize`, the part size grown for huge blobs so that no upload
/// needs more than `maximumParts`.
public struct S3PartPlan: Equatable, Sendable {
    /// S3's smallest part (except the last).
    public static let minimumPartSize: Int64 = 5 << 20
    public static let maximumParts: Int64 = 10_000
    /// S3's largest part.
    public static let maximumPartSize: Int64 = 5 << 30
    /// S3's largest object.
    public static let maximumObjectSize: Int64 = 5 << 40

    public let size: Int64
    public let partSize: Int64

    /// - Parameter preferredPartSize: `--s3-part-size`; raised to the minimum, and as far as
    ///   needed (in whole MiB) to keep within `maximumParts`.
    public init(size: Int64, preferredPartSize: Int64) {
        self.size = size
        var partSize = max(preferredPartSize, S3PartPlan.minimumPartSize)
        if (size + partSize - 1) / partSize > S3PartPlan.maximumParts {
            let needed = (size + S3PartPlan.maximumParts - 1) / S3PartPlan.maximumParts
            partSize = ((needed + (1 << 20) - 1) >> 20) << 20
        }
        self.partSize = partSize
    }

    /// The part size for a blob sent compressed (`--compress`: each part one gzip member of its
    /// range), chosen so that parts compress to a little over `preferredPartSize`: the preferred
    /// size divided by `compressedRatio` (compressed bytes per byte of a sample of the blob), 10 %
    /// more for the parts that compress better than the sample, rounded up to whole MiB; never
    /// below the preferred size nor above S3's largest part. A part that still compresses below
    /// S3's smallest is padded (`GzipStream`).
    public static func compressedPartSize(preferredPartSize: Int64, compressedRatio: Double) -> Int64 {
        let preferred = max(preferredPartSize, minimumPartSize)
        guard compressedRatio > 0, compressedRatio < 1 else { return preferred }
        let scaled = min(Double(preferred) / compressedRatio * 1.1, Double(maximumPartSize))
        let mebibytes = (Int64(scaled.rounded(.up)) + (1 << 20) - 1) >> 20
        return min(max(preferred, mebibytes << 20), max(preferred, maximumPartSize))
    }

    public var partCount: Int { Int(max(1, (size + partSize - 1) / partSize)) }

    /// The byte range of part `number` (1-based): offset and length.
    public func range(ofPart number: Int) -> (offset: Int64, length: Int64) {
        precondition((1...partCount).contains(number), "part \(number) of \(partCount)")
        let offset = Int64(number - 1) * partSize
        return (offset, min(partSize, size - offset))
    }

    /// The bytes of the parts numbered `numbers` (a number outside the plan counts none).
    public func bytes(ofParts numbers: some Sequence<Int>) -> Int64 {
        numbers.filter { (1...partCount).contains($0) }.reduce(Int64(0)) { $0 + range(ofPart: $1).length }
    }

    /// The body of CompleteMultipartUpload for the parts' ETags, in part order.
    public static func completionBody(etags: [String]) -> String {
        func escaped(_ text: String) -> String {
            text.replacingAll("&", "&amp;").replacingAll("<", "&lt;").replacingAll(">", "&gt;")
        }
        let parts = etags.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(escaped($0.element))</ETag></Part>" }
        return "<CompleteMultipartUpload>\(parts.joined())</CompleteMultipartUpload>"
    }

    /// The text of the first `<Tag>…</Tag>` in an XML answer (e.g. `UploadId`).
    public static func element(_ tag: String, in xml: String) -> String? {
        guard let open = xml.firstRange(of: "<\(tag)>") else { return nil }
        let rest = xml[open.upperBound...]
        guard let close = rest.firstRange(of: "</\(tag)>") else { return nil }
        let value = String(rest[..<close.lowerBound])
        return value.isEmpty ? nil : value
    }
}

extension String {
    fileprivate func replacingAll(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
