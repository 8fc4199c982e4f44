#if canImport(Glibc)
import Glibc
#endif

/// Where one request's body goes while it is read: counted always, inflated when it is gzip
/// (`GzipInflater`: what is kept and stored is then the inflated content), kept in memory if
/// asked, and streamed to a dot-named temporary file in the store directory when it is to be
/// stored. `finish` renames the temporary file into place only for a complete body.
final class BodySink {
    private(set) var kept: [UInt8] = []
    /// Bytes of the body as they came (on the wire).
    private(set) var length: Int64 = 0
    /// Bytes of the content kept and stored: `length`, or what a gzip body inflated to.
    private(set) var contentLength: Int64 = 0
    private let inflater: GzipInflater?
    private let keepsInMemory: Bool
    private var fileFD: Int32 = -1
    private var temporaryPath = ""
    private var finalPath = ""
    /// Set when the store file could not be created or written; the body is then not stored.
    private(set) var storeFailure: String?

    /// `storePath` is the final path of the stored body, or nil not to store it; `inflating`: the
    /// body is gzip (`Content-Encoding: gzip`).
    init(keepsInMemory: Bool, storePath: String?, inflating: Bool = false) {
        self.keepsInMemory = keepsInMemory
        inflater = inflating ? GzipInflater() : nil
        guard let storePath else { return }
        let slash = storePath.lastIndex(of: "/")!
        finalPath = storePath
        temporaryPath = String(storePath[...slash]) + "." + String(storePath[storePath.index(after: slash)...]) + ".partial"
        fileFD = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fileFD < 0 { storeFailure = "cannot create \(temporaryPath): errno \(errno)" }
    }

    deinit {
        discardFile()
    }

    /// Why a gzip body is not one (it ended mid-member, or is not gzip at all), or nil. An empty
    /// body is no body, whatever its header says (S3's CreateMultipartUpload carries the object's
    /// `Content-Encoding` and nothing to inflate).
    var decodeFailure: String? {
        guard let inflater, length > 0 else { return nil }
        return inflater.failure ?? (inflater.complete ? nil : "not a whole gzip body (it ends inside a member)")
    }

    func append(_ bytes: ArraySlice<UInt8>) {
        length += Int64(bytes.count)
        guard let inflater else { return store(bytes) }
        if !inflater.feed(bytes, emit: store) { discardFile() }
    }

    /// Keeps and writes bytes of the content.
    private func store(_ bytes: ArraySlice<UInt8>) {
        contentLength += Int64(bytes.count)
        if keepsInMemory { kept.append(contentsOf: bytes) }
        guard fileFD >= 0 else { return }
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fileFD, raw.baseAddress! + offset, raw.count - offset)
                if n < 0, errno == EINTR { continue }
                if n <= 0 {
                    storeFailure = "cannot write \(temporaryPath): errno \(errno)"
                    discardFile()
                    return
                }
                offset += n
            }
        }
    }

    /// Ends the body. A complete body that was being stored is moved to its final name, whose
    /// path is returned; otherwise the temporary file is removed and nil returned.
    func finish(complete: Bool) -> String? {
        guard fileFD >= 0 else { return nil }
        guard complete else {
            discardFile()
            return nil
        }
        let closed = close(fileFD)
        fileFD = -1
        guard closed == 0, rename(temporaryPath, finalPath) == 0 else {
            storeFailure = "cannot store \(finalPath): errno \(errno)"
            unlink(temporaryPath)
            return nil
        }
        return finalPath
    }

    private func discardFile() {
        guard fileFD >= 0 else { return }
        close(fileFD)
        fileFD = -1
        unlink(temporaryPath)
    }
}
