import Dispatch
import SpoolCore

/// What the driver reads of a blob besides the parts it sends: how well it compresses (the
/// plan of a compressed upload) and the object its compressed parts make (a completion in
/// doubt, checked against the object at the key).
extension S3MultipartAttempt {
    /// Compressed bytes per byte of the blob, from up to 4 samples of 1 MiB spread over it (each
    /// compressed alone, as a part is); 1 when it cannot be read (the parts then find out why).
    static func compressedRatio(of blob: BlobBody, coding: ContentCoding) -> Double {
        let sample: Int64 = 1 << 20
        let count = Int64(min(4, max(1, blob.size / sample)))
        var (raw, coded): (Int64, Int64) = (0, 0)
        for index in 0..<count {
            let offset = blob.size <= sample ? 0 : (blob.size - sample) * index / max(1, count - 1)
            let length = min(sample, blob.size - offset)
            guard let measured = try? BodyDigest.measure([.blob(blob, offset: offset, length: length)], coding: coding, hashing: nil) else {
                return 1
            }
            (raw, coded) = (raw + length, coded + measured.length)
        }
        return raw > 0 ? Double(coded) / Double(raw) : 1
    }

    /// The size and MD5 of the object a compressed upload's parts make, every part compressed
    /// (and padded) as it is sent.
    static func codedObject(of blob: BlobBody, plan: S3PartPlan, coding: ContentCoding) throws -> (size: Int64, md5: [UInt8]) {
        let md5 = BulkSHA256(md5: true)
        var size: Int64 = 0
        for number in 1...plan.partCount {
            let (offset, length) = plan.range(ofPart: number)
            let padTo = number < plan.partCount ? S3PartPlan.minimumPartSize : 0
            size += try BodyDigest.measure(
                [.blob(blob, offset: offset, length: length)], coding: coding, padTo: padTo, hashing: md5, finalizing: false
            ).length
        }
        return (size, try md5.finalize())
    }
}
