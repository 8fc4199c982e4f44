import SpoolEngine

/// A workload for the explorer: real spool and engine code driven through a `PowerCutRun`.
/// Adding one is adding a value of this type (see `PowerCutWorkloads`): the explorer records
/// it, cuts the power at every crash point, and checks every state it may leave.
public struct PowerCutWorkload {
    public var name: String
    /// The daemon that starts after the cut (recovery's retry budgets, `--no-direct`...).
    public var configuration: EngineConfiguration
    /// Builds the spool the workload starts from, before recording (all of it durable).
    public var prepare: (PowerCutRun) throws -> Void
    public var run: (PowerCutRun) throws -> Void

    public init(
        _ name: String, configuration: EngineConfiguration, prepare: @escaping (PowerCutRun) throws -> Void = { _ in },
        run: @escaping (PowerCutRun) throws -> Void
    ) {
        self.name = name
        self.configuration = configuration
        self.prepare = prepare
        self.run = run
    }
}
