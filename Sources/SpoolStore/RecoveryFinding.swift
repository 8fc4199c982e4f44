import SpoolSystem

/// An entry that a recovery's read of the spool found to be no item's, and what became of it
/// (`Spool.recoveryScan`, `Spool.inFlightRecoveryScan`): told to the caller as it happens, for the
/// caller to log (the store writes no log).
public enum RecoveryFinding: Hashable, Sendable {
    /// A name in tmp/ that is no finished item's (`tmp/<name>`; ours and unfinished): removed
    /// (an inspection only names it).
    case tmpStray(String)
    /// An entry named like an item file (or any in tmp/) that is not a regular file
    /// (`<folder>/<name>`): set aside in `SPOOL/corrupt/` as `aside` (`corrupt/<name>`).
    case setAside(String, FileStatus.FileType, aside: String)
    /// Such an entry that could not be set aside (`reason`: the error), left where it is.
    case notSetAside(String, FileStatus.FileType, reason: String)
    /// Such an entry found by an inspection, which changes nothing.
    case notRegular(String, FileStatus.FileType)
    /// A name in a state folder that is no item file (`<folder>/<name>`), left alone.
    case notAnItemFile(String)
}
