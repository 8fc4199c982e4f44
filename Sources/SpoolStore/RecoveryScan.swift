import SpoolCore
import SpoolSystem

/// What a recovery's read of the spool found (`Spool.recoveryScan`, `Spool.inFlightRecoveryScan`):
/// the item files, for `RecoveryPlanner`, and what it did with the entries that are no item's, in
/// the order it met them, for the caller to tell (the store writes no log).
public struct RecoveryScan: Sendable {
    /// An entry that is no item's, and what became of it.
    public enum Finding: Equatable, Sendable {
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

    /// The item files found (regular files only).
    public var files: [RecoveryPlanner.FoundFile] = []
    public var findings: [Finding] = []

    /// The names of the `tmpStray` findings.
    public var tmpStrays: [String] { findings.compactMap { if case .tmpStray(let name) = $0 { name } else { nil } } }

    /// The names of the entries that are not regular files (`notRegular`, `setAside`, `notSetAside`).
    public var notRegular: [String] {
        findings.compactMap {
            switch $0 {
            case .notRegular(let name, _), .setAside(let name, _, _), .notSetAside(let name, _, _): name
            case .tmpStray, .notAnItemFile: nil
            }
        }
    }
}
