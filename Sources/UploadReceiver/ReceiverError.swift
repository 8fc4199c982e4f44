#if canImport(Glibc)
import Glibc
#endif

/// Why an `UploadReceiver` could not start.
public enum ReceiverError: Error, CustomStringConvertible, Equatable {
    /// `start` was called on a receiver that is running or was stopped; make a new one.
    case alreadyStarted
    /// A socket call failed; `errno` is the C error number.
    case socket(operation: String, errno: Int32)
    /// The store directory could not be created.
    case storeDirectory(path: String, reason: String)

    public var description: String {
        switch self {
        case .alreadyStarted:
            return "the receiver was already started (a receiver starts once)"
        case let .socket(operation, code):
            return "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
        case let .storeDirectory(path, reason):
            return "cannot use store directory \(path): \(reason)"
        }
    }
}
