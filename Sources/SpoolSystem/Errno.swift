import Glibc

/// An error number a system call set, with readable names for the ones spoold decides on
/// (swift-system's `Errno` is the model): callers match `.noSpace`, never a raw `ENOSPC`.
public struct Errno: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno`, read right after the call that failed.
    public static var current: Errno { Errno(rawValue: errno) }

    public static let notPermitted = Errno(rawValue: EPERM)
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let ioError = Errno(rawValue: EIO)
    public static let noSuchAddressOrDevice = Errno(rawValue: ENXIO)
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    public static let resourceTemporarilyUnavailable = Errno(rawValue: EAGAIN)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let improperLink = Errno(rawValue: EXDEV)
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    public static let isDirectory = Errno(rawValue: EISDIR)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    public static let fileNameTooLong = Errno(rawValue: ENAMETOOLONG)
    public static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)
    public static let tooManySymbolicLinkLevels = Errno(rawValue: ELOOP)
    public static let diskQuotaExceeded = Errno(rawValue: EDQUOT)
    public static let notSupported = Errno(rawValue: ENOTSUP)

    /// `No space left on device (ENOSPC)`: the C library's text, with the symbol when it is one
    /// spoold names.
    public var description: String {
        let text = String(cString: strerror(rawValue))
        return Errno.symbols[rawValue].map { "\(text) (\($0))" } ?? text
    }

    private static let symbols: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", ESRCH: "ESRCH", EINTR: "EINTR", EIO: "EIO", EBADF: "EBADF",
        EAGAIN: "EAGAIN", EACCES: "EACCES", EEXIST: "EEXIST", EXDEV: "EXDEV", ENOTDIR: "ENOTDIR",
        EISDIR: "EISDIR", EINVAL: "EINVAL", EMFILE: "EMFILE", ENOSPC: "ENOSPC", EROFS: "EROFS", ELOOP: "ELOOP",
        ENAMETOOLONG: "ENAMETOOLONG", ENOTEMPTY: "ENOTEMPTY", EDQUOT: "EDQUOT", ENXIO: "ENXIO",
        ENOTSUP: "ENOTSUP",
    ]
}
