import SpoolCore

/// What start-up recovery would do to one slice of the spool, found without changing anything
/// (`Spool.inspectRecovery`, for `spoold check`).
public struct RecoveryInspection {
    public var indexDamage: IndexLogScan.Damage
    /// False when `index.wal` is a folder or another non-file: recovery sets it aside.
    public var indexIsRegularFile: Bool
    public var plan: RecoveryPlan
    /// Items that recovery would return to pending/ (or failed/), with where they are now.
    public var interrupted: [ItemID: ItemLocation]
    /// Names in tmp/ that are not item files (recovery removes them).
    public var tmpStrays: [String]
    /// Entries named like item files (or in tmp/) that are not regular files: recovery sets
    /// them aside in `SPOOL/corrupt/`.
    public var notRegular: [String]
}
