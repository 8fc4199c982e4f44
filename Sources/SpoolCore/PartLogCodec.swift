/// The records of an item's part log (`SPOOL/parts/<id>.log`): what survives a crash of an S3
/// multipart upload (its upload id and the parts the store accepted), or of a tus upload (its
/// upload URL).
///
/// The framing is the index's (`IndexLogCodec`: `R <len> <crc> <payload>\n`, CRC-32C checked,
/// readable with `cat`). The first record names the upload, each later one a part the store
/// accepted, or how far a tus server got:
///
///     upload <blob size> <part size> <region> <upload id> <object URL> [<coding>]
///     part <number> <ETag>
///
///     tus <blob size> <upload URL> <endpoint URL>
///     offset <bytes the server acknowledged>
///
/// `<coding>` (`gzip`) names the coding every part was sent in (`--compress`: each part one gzip
/// member of its range of the blob); without it the parts are the blob's bytes as they are. A
/// log is resumed only by an upload in the same coding: parts of both kinds would make an
/// object no reader can use.
///
/// Variable fields are escaped (`%`, space, control bytes and bytes over 0x7E as `%XX`), so a
/// payload never holds a space inside a field, a `\n` or a NUL.
///
/// `decode` takes good records in order up to the first line that is not one and ignores the
/// rest: a torn or garbage tail is the normal end of a log cut by a crash, and whatever it held
/// only costs a part sent again. The caller truncates the file to `validLength` before it
/// appends, so a record is never written after garbage. A log whose first record is not a good
/// `upload` record has no state (`upload` nil); `isTornStart` tells a first record cut by a crash
/// (nothing but a partial line) from a damaged one.
public enum PartLogCodec {
    /// The upload a log describes, and the parts done so far.
    public struct State: Equatable, Sendable {
        public var size: Int64
        public var partSize: Int64
        public var region: String
        public var uploadID: String
        /// The object's URL the upload was created for (the parts must go to the same key).
        public var url: String
        /// Part number → ETag, as the store returned it.
        public var parts: [Int: String] = [:]
        /// The coding every part is sent in (`--compress`); nil: the blob's bytes as they are.
        public var coding: ContentCoding?

        public init(
            size: Int64, partSize: Int64, region: String, uploadID: String, url: String, parts: [Int: String] = [:],
            coding: ContentCoding? = nil
        ) {
            (self.size, self.partSize, self.region, self.uploadID, self.url, self.parts) = (size, partSize, region, uploadID, url, parts)
            self.coding = coding
        }

        /// The plan the parts were cut by.
        public var plan: S3PartPlan { S3PartPlan(size: size, preferredPartSize: partSize) }
    }

    public struct Scan: Equatable, Sendable {
        /// An S3 multipart upload's.
        public var state: State?
        /// A tus upload's.
        public var tus: TusUploadRecord?
        /// The last `offset` record of a tus upload's log (0 without one).
        public var tusOffset: Int64 = 0
        /// Bytes of good records from the start; the rest is a tail to truncate before appending.
        public var validLength: Int
        /// No upload, and not one whole line: the file was cut while its first record was being
        /// written (a crash before the upload id was durable), not damaged later.
        public var isTornStart: Bool

        public init(state: State?, validLength: Int, isTornStart: Bool = false, tus: TusUploadRecord? = nil, tusOffset: Int64 = 0) {
            (self.state, self.validLength, self.isTornStart) = (state, validLength, isTornStart)
            (self.tus, self.tusOffset) = (tus, tusOffset)
        }

        /// Whether the first record names an upload (of either kind).
        public var namesUpload: Bool { state != nil || tus != nil }
    }

    /// The first record. Fields longer than the framing allows make it nil (the upload then
    /// simply is not resumable).
    public static func encodeHeader(_ state: State) -> [UInt8]? {
        let payload = "upload \(state.size) \(state.partSize) \(escape(state.region)) \(escape(state.uploadID)) \(escape(state.url))"
            + (state.coding.map { " \($0.rawValue)" } ?? "")
        return payload.utf8.count <= IndexLogCodec.maximumPayloadLength ? IndexLogCodec.encode(payload: payload) : nil
    }

    /// One completed part; nil when the ETag is too long to record (the part is then not kept).
    public static func encodePart(_ number: Int, etag: String) -> [UInt8]? {
        let payload = "part \(number) \(escape(etag))"
        return payload.utf8.count <= IndexLogCodec.maximumPayloadLength ? IndexLogCodec.encode(payload: payload) : nil
    }

    /// The first record of a tus upload's log.
    public static func encodeTusHeader(_ record: TusUploadRecord) -> [UInt8]? {
        let payload = "tus \(record.size) \(escape(record.uploadURL)) \(escape(record.endpoint))"
        return payload.utf8.count <= IndexLogCodec.maximumPayloadLength ? IndexLogCodec.encode(payload: payload) : nil
    }

    /// How many bytes a tus server acknowledged.
    public static func encodeTusOffset(_ offset: Int64) -> [UInt8] {
        IndexLogCodec.encode(payload: "offset \(offset)")
    }

    public static func decode(_ bytes: [UInt8]) -> Scan {
        var state: State?
        var tus: TusUploadRecord?
        var tusOffset: Int64 = 0
        var offset = 0
        while offset < bytes.count {
            guard let end = bytes[offset...].firstIndex(of: UInt8(ascii: "\n")),
                  let payload = payload(of: bytes[offset...end])
            else { break }
            let fields = payload.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            if let record = tus {
                guard fields.count == 2, fields[0] == "offset", let acknowledged = Int64(fields[1]),
                      (0...record.size).contains(acknowledged)
                else { break }
                tusOffset = acknowledged
            } else if state == nil && offset == 0 && fields.first == "tus" {
                guard fields.count == 4, let size = Int64(fields[1]), size >= 0,
                      let url = unescape(fields[2]), !url.isEmpty, let endpoint = unescape(fields[3]), !endpoint.isEmpty
                else { break }
                tus = TusUploadRecord(size: size, uploadURL: url, endpoint: endpoint)
            } else if state == nil {
                guard fields.count == 6 || fields.count == 7, fields[0] == "upload", let size = Int64(fields[1]),
                      let partSize = Int64(fields[2]), size > 0, partSize >= S3PartPlan.minimumPartSize,
                      let region = unescape(fields[3]), let uploadID = unescape(fields[4]), !uploadID.isEmpty,
                      let url = unescape(fields[5])
                else { break }
                // A coding this version does not know: not a log it can resume.
                let coding = fields.count == 7 ? ContentCoding(rawValue: fields[6]) : nil
                guard fields.count == 6 || coding != nil else { break }
                state = State(size: size, partSize: partSize, region: region, uploadID: uploadID, url: url, coding: coding)
            } else {
                guard fields.count == 3, fields[0] == "part", let number = Int(fields[1]),
                      (1...state!.plan.partCount).contains(number), let etag = unescape(fields[2]), !etag.isEmpty
                else { break }
                state!.parts[number] = etag
            }
            offset = end + 1
        }
        let named = state != nil || tus != nil
        return Scan(
            state: state, validLength: named ? offset : 0, isTornStart: !named && !bytes.contains(UInt8(ascii: "\n")), tus: tus,
            tusOffset: tusOffset)
    }

    /// The payload of one whole framed line (`R <len> <crc> <payload>\n`), or nil.
    static func payload(of line: ArraySlice<UInt8>) -> String? {
        let text = line.dropLast()
        let fields = text.split(separator: UInt8(ascii: " "), maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count == 4, fields[0].elementsEqual("R".utf8),
              let length = Int(String(decoding: fields[1], as: UTF8.self)), length == fields[3].count,
              fields[2].count == 8, let crc = UInt32(String(decoding: fields[2], as: UTF8.self), radix: 16),
              CRC32C.checksum(fields[3]) == crc
        else { return nil }
        return String(validating: fields[3], as: UTF8.self)
    }

    static func escape(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for c in text.utf8 {
            if c <= 0x20 || c >= 0x7F || c == UInt8(ascii: "%") {
                out += [UInt8(ascii: "%"), hex[Int(c >> 4)], hex[Int(c & 15)]]
            } else {
                out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func unescape(_ text: String) -> String? {
        var out: [UInt8] = []
        var bytes = text.utf8.makeIterator()
        while let c = bytes.next() {
            guard c == UInt8(ascii: "%") else {
                out.append(c)
                continue
            }
            guard let high = bytes.next(), let low = bytes.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else { return nil }
            out.append(value)
        }
        return String(validating: out, as: UTF8.self)
    }
}
