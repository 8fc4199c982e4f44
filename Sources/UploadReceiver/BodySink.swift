#if canImport(Glibc)
import Glibc
#endif

/// Where one request's body goes while it is read: counted always, kept in memory if asked,
/// and streamed to a dot-named temporary file in the store directory when it is to be stored.
/// `finish` renames the temporary file into place only for a complete body.
final class BodySink {
    private(set) var kept: [UInt8] = []
    private(set) var length: Int64 = 0
    private let keepsInMemory: Bool
    private var fileFD: Int32 = -1
    private var temporaryPath = ""
    private var finalPath = ""
    /// Set when the store file could not be created or written; the body is then not stored.
    private(set) var storeFailure: String?

    /// `storePath` is the final path of the stored body, or nil not to store it.
    init(keepsInMemory: Bool, storePath: String?) {
        self.keepsInMemory = keepsInMemory
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

    func append(_ bytes: ArraySlice<UInt8>) {
        length += Int64(bytes.count)
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
