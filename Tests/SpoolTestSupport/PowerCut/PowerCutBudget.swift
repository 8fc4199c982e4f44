/// How much the explorer tries: states per crash point (all of them when there are no more),
/// and how many crash states get their own start-up recovery cut in turn.
public struct PowerCutBudget: Sendable {
    public var statesPerCrashPoint: Int
    /// Crash states (those whose recovery has the most to do) whose recovery is recorded and cut.
    public var recoveryCuts: Int
    public var statesPerRecoveryCrashPoint: Int
    public var seed: UInt64

    public init(statesPerCrashPoint: Int = 16, recoveryCuts: Int = 2, statesPerRecoveryCrashPoint: Int = 6, seed: UInt64 = 28) {
        self.statesPerCrashPoint = statesPerCrashPoint
        self.recoveryCuts = recoveryCuts
        self.statesPerRecoveryCrashPoint = statesPerRecoveryCrashPoint
        self.seed = seed
    }
}
