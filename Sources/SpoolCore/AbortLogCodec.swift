/// The records of `SPOOL/parts/aborts.log`: the AbortMultipartUpload requests spoold owes the
/// store (`OwedAbort`), so an upload given up is aborted even across crashes and restarts.
///
/// Framed like the part logs (`R <len> <crc> <payload>\n`, CRC-32C, readable with `cat`), fields
/// escaped as there (`PartLogCodec.escape`):
///
///     abort <since, ms since 1970> <item id> <region> <upload id> <object URL>
///     terminate <since, ms since 1970> <item id> <tus upload URL> <tus endpoint URL>
///     aborted <upload id or tus upload URL>
///
/// An `abort` record is written (and fsynced) before the part log that named the upload goes; an
/// `aborted` record once the store confirmed it. What is owed is every `abort` without a later
/// `aborted` of the same upload id, in the order they were written.
///
/// Unlike a part log, several processes append (the daemon, `purge`) and no record depends on
/// the one before it, so `decode` steps over a line that is not a good record (counting it in
/// `damagedLines`) instead of stopping there; a tail without its `\n` (a crash mid-append) is
/// not a record (`validLength` ends before it) and the next append starts on a new line.
public enum AbortLogCodec {
    public struct Scan: Equatable, Sendable {
        /// Owed aborts, in the order their records were written.
        public var owed: [OwedAbort] = []
        /// `aborted` records (each a line compaction drops).
        public var confirmed = 0
        /// Whole lines that are not good records: damage, not the trace of a crash.
        public var damagedLines = 0
        /// Bytes up to the end of the last whole line; a torn tail follows.
        public var validLength = 0
        public var endsInNewline = true

        public init() {}
    }

    public static func encodeOwed(_ abort: OwedAbort) -> [UInt8]? {
        let payload = switch abort.kind {
        case .s3Multipart:
            "abort \(abort.since.millisecondsSinceEpoch) \(abort.id) \(PartLogCodec.escape(abort.region)) "
                + "\(PartLogCodec.escape(abort.uploadID)) \(PartLogCodec.escape(abort.url))"
        case .tusTermination:
            "terminate \(abort.since.millisecondsSinceEpoch) \(abort.id) \(PartLogCodec.escape(abort.uploadID)) \(PartLogCodec.escape(abort.url))"
        }
        return payload.utf8.count <= IndexLogCodec.maximumPayloadLength ? IndexLogCodec.encode(payload: payload) : nil
    }

    public static func encodeConfirmed(uploadID: String) -> [UInt8]? {
        let payload = "aborted \(PartLogCodec.escape(uploadID))"
        return payload.utf8.count <= IndexLogCodec.maximumPayloadLength ? IndexLogCodec.encode(payload: payload) : nil
    }

    public static func decode(_ bytes: [UInt8]) -> Scan {
        var scan = Scan()
        var owed: [OwedAbort] = []
        var offset = 0
        while offset < bytes.count {
            guard let end = bytes[offset...].firstIndex(of: UInt8(ascii: "\n")) else { break }
            defer {
                offset = end + 1
                scan.validLength = offset
            }
            if end == offset { continue }  // an empty line: a new start after a torn tail
            guard let payload = PartLogCodec.payload(of: bytes[offset...end]) else {
                scan.damagedLines += 1
                continue
            }
            let fields = payload.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            if fields.count == 6, fields[0] == "abort", let ms = Int64(fields[1]), let id = ItemID(fields[2]),
               let region = PartLogCodec.unescape(fields[3]), let uploadID = PartLogCodec.unescape(fields[4]), !uploadID.isEmpty,
               let url = PartLogCodec.unescape(fields[5])
            {
                owed.removeAll { $0.uploadID == uploadID }
                owed.append(OwedAbort(id: id, region: region, uploadID: uploadID, url: url, since: Timestamp(millisecondsSinceEpoch: ms)))
            } else if fields.count == 5, fields[0] == "terminate", let ms = Int64(fields[1]), let id = ItemID(fields[2]),
                      let uploadURL = PartLogCodec.unescape(fields[3]), !uploadURL.isEmpty, let endpoint = PartLogCodec.unescape(fields[4])
            {
                owed.removeAll { $0.uploadID == uploadURL }
                owed.append(OwedAbort(
                    tusTerminationOf: id, uploadURL: uploadURL, endpoint: endpoint, since: Timestamp(millisecondsSinceEpoch: ms)))
            } else if fields.count == 2, fields[0] == "aborted", let uploadID = PartLogCodec.unescape(fields[1]) {
                owed.removeAll { $0.uploadID == uploadID }
                scan.confirmed += 1
            } else {
                scan.damagedLines += 1
            }
        }
        scan.owed = owed
        scan.endsInNewline = scan.validLength == bytes.count
        return scan
    }
}
