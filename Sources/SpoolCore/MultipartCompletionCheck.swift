/// Asking the store before deciding, when an S3 multipart upload's completion is in doubt.
///
/// Two moments leave it in doubt: a CompleteMultipartUpload that ended without a clear answer
/// (a 5xx, a dropped connection or a deadline, an error inside a 200), and a resumed upload the
/// store no longer has (NoSuchUpload at ListParts) although its log records every part, as a
/// crash after a completion leaves it. Either way the store may or may not have made the object,
/// and the two wrong guesses cost differently: taking a lost upload for done loses the item;
/// taking a done one for lost sends the whole object again. So:
///
/// | ListParts answers               | HEAD of the key answers                                   | decision |
/// |---------------------------------|-----------------------------------------------------------|----------|
/// | the upload, still open          | (not asked)                                               | not completed: the attempt ends retryable, the upload kept |
/// | NoSuchUpload                    | the expected size and ETag (`Expected`)                   | completed: the item is uploaded |
/// | NoSuchUpload                    | 404, or another size or ETag (another object at the key)  | gone without the object: a new upload |
/// | anything else (5xx, no answer)  | —                                                         | unknown: the attempt ends retryable |
/// | NoSuchUpload                    | anything else                                             | unknown: the attempt ends retryable |
///
/// The expected ETag is exact when every part's ETag is an MD5 (32 hex digits, as S3 and most
/// stores give them without SSE-KMS): the MD5 of the parts' digests followed by `-<parts>`; then
/// an older object of the same size at the key (a file sent again under the same name) is never
/// taken for this one. Otherwise only its shape is checked (it must end in `-<parts>`, as every
/// multipart object's does), with the size. Some stores give a completed object the MD5 of its
/// bytes instead (`rclone serve s3`, whose ETags come from the file system below it): an ETag of
/// that shape, with the right size, is compared with the MD5 of the blob itself
/// (`wantsContentMD5`, then `Expected.contentMD5`), read once for the purpose.
public enum MultipartCompletionCheck {
    /// The object a completion of the upload's parts makes.
    public struct Expected: Equatable, Sendable {
        public var size: Int64
        public var partCount: Int
        /// The object's ETag (unquoted) when every part's ETag is an MD5; nil when only its shape is known.
        public var etag: String?
        /// The MD5 of the blob (hex), once computed for a store whose ETags are the MD5 of the bytes.
        public var contentMD5: String?

        /// - Parameter partETags: every part's ETag, in part order, as the store returned them.
        public init(size: Int64, partETags: [String]) {
            self.size = size
            partCount = partETags.count
            etag = MultipartCompletionCheck.multipartETag(of: partETags)
        }

        /// What a HEAD answer must show, in words for the log.
        public var description: String {
            "\(size) B, ETag " + (etag.map { "\"\($0)\"" } ?? "ending in -\(partCount)")
                + (contentMD5.map { " or the MD5 of its bytes \"\($0)\"" } ?? "")
        }
    }

    /// What ListParts answered about the upload.
    public enum Listing: Equatable, Sendable {
        case open
        /// NoSuchUpload: completed, aborted or expired.
        case gone
        /// Any other answer, or none (what it was, for the log).
        case unclear(String)
    }

    /// What HEAD of the object's key answered.
    public enum Head: Equatable, Sendable {
        /// 2xx, with the answer's Content-Length and ETag as given (either may be missing).
        case found(size: Int64?, etag: String?)
        /// 404: no object at the key.
        case absent
        case unclear(String)
    }

    public enum Decision: Equatable, Sendable {
        /// The upload is gone: ask HEAD of the key next.
        case headObject
        /// The store made the object: the item is uploaded (why, for the log).
        case completed(String)
        /// The upload is gone and the object was not made: a new upload starts (why).
        case startOver(String)
        /// Not known: the attempt ends as retryable, the upload and its log kept for the next (why).
        case retryLater(String)
    }

    /// After ListParts, asked because the completion's answer was unclear.
    public static func afterAmbiguousCompletion(_ listing: Listing) -> Decision {
        switch listing {
        case .open: .retryLater("ListParts still lists the upload: the store did not complete it")
        case .gone: .headObject
        case .unclear(let what): .retryLater("ListParts answered \(what): whether the store completed it is unknown")
        }
    }

    /// After HEAD of the key, asked because the upload is gone.
    public static func afterHead(_ head: Head, expected: Expected) -> Decision {
        switch head {
        case .absent:
            return .startOver("the upload is gone (NoSuchUpload) and HEAD finds no object at the key")
        case .unclear(let what):
            return .retryLater("the upload is gone (NoSuchUpload) and HEAD answered \(what): whether the store completed it is unknown")
        case .found(let size, let etag):
            let shown = "\(size.map { "\($0) B" } ?? "no size"), ETag \(etag.map { "\"\(unquoted($0))\"" } ?? "none")"
            guard size == expected.size, let etag, matches(unquoted(etag), expected) else {
                return .startOver("the upload is gone (NoSuchUpload) and the object at the key is another (\(shown); expected \(expected.description))")
            }
            return .completed("the upload is gone (NoSuchUpload) and HEAD finds the object it makes (\(shown))")
        }
    }

    /// The parts to send again after the store refused a completion (`InvalidPart`) while still
    /// listing the upload: those missing from `listed` or listed with another ETag than `sent`.
    /// Empty when the listing holds every part as sent: the store will not complete this upload
    /// whatever is re-sent.
    public static func partsToResend(listed: [Int: String], sent: [Int: String], partCount: Int) -> [Int] {
        (1...max(1, partCount)).filter { number in
            guard let mine = sent[number], let theirs = listed[number] else { return true }
            return unquoted(mine) != unquoted(theirs)
        }
    }

    private static func matches(_ etag: String, _ expected: Expected) -> Bool {
        if let md5 = expected.contentMD5, etag.lowercased() == md5 { return true }
        if let exact = expected.etag { return etag.lowercased() == exact }
        return etag.hasSuffix("-\(expected.partCount)")
    }

    /// Whether HEAD found an object of the right size whose ETag has the shape of a plain MD5
    /// (a store that gives objects the MD5 of their bytes): worth reading the blob to compare.
    public static func wantsContentMD5(_ head: Head, expected: Expected) -> Bool {
        guard expected.contentMD5 == nil, case .found(let size, let etag?) = head, size == expected.size else { return false }
        return md5Digest(unquoted(etag)) != nil
    }

    /// S3's ETag of the object a completion of parts with these ETags makes: the MD5 of their
    /// 16-byte digests, in part order, then `-<parts>`. Nil unless every part's ETag is an MD5.
    public static func multipartETag(of partETags: [String]) -> String? {
        guard !partETags.isEmpty else { return nil }
        var digests: [UInt8] = []
        digests.reserveCapacity(16 * partETags.count)
        for etag in partETags {
            guard let digest = md5Digest(unquoted(etag)) else { return nil }
            digests += digest
        }
        return hex(MD5.hash(digests)) + "-\(partETags.count)"
    }

    /// An ETag without its quotes (`&quot;` and `&#34;` too): stores differ in how their XML writes them.
    public static func unquoted(_ etag: String) -> String {
        var text = etag.replacing("&quot;", with: "\"").replacing("&#34;", with: "\"")
        text.removeAll { $0 == "\"" }
        if text.hasPrefix("W/") { text.removeFirst(2) }
        return text
    }

    private static func md5Digest(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count == 32 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(16)
        var i = 0
        while i < 32 {
            guard let high = hexValue(chars[i]), let low = hexValue(chars[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in bytes { out += [digits[Int(b >> 4)], digits[Int(b & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }
}
