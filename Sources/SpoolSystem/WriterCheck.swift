/// The kernel's answer to "does any process hold this file open for writing?" (`FileSystem.writerCheck`).
public enum WriterCheck: Equatable, Sendable {
    /// No writer: a read lease could be taken (and was given back at once).
    case noWriter
    /// A process holds the file open for writing (the lease was refused with EAGAIN).
    case openForWriting
    /// The question could not be asked: EACCES/EPERM (neither the file's owner nor CAP_LEASE),
    /// EINVAL (leases disabled or unsupported by the file system). The caller falls back to a rule.
    case unknown(errno: Errno)
}
