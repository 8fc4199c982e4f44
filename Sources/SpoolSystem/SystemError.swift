import Glibc

/// A failed system call: which call, on which path, and the errno, phrased for an operator.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var code: Int32

    public init(_ operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    public var description: String { "\(operation) \(path): \(SystemError.message(for: code))" }

    /// `No space left on device (ENOSPC)`.
    public static func message(for code: Int32) -> String {
        let text = String(cString: strerror(code))
        return names[code].map { "\(text) (\($0))" } ?? text
    }

    private static let names: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", EBADF: "EBADF", EAGAIN: "EAGAIN",
        EACCES: "EACCES", EEXIST: "EEXIST", EXDEV: "EXDEV", ENOTDIR: "ENOTDIR", EISDIR: "EISDIR",
        EINVAL: "EINVAL", EMFILE: "EMFILE", ENOSPC: "ENOSPC", EROFS: "EROFS", ELOOP: "ELOOP",
        ENAMETOOLONG: "ENAMETOOLONG", ENOTEMPTY: "ENOTEMPTY", EDQUOT: "EDQUOT", ENXIO: "ENXIO",
    ]

    public var isNotFound: Bool { code == ENOENT }
    public var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT }
    /// A failed fsync or syncfs: final whatever its errno (fsyncgate), never a full disk to wait out.
    public var isSyncFailure: Bool { operation == "fsync" || operation == "syncfs" }
}
