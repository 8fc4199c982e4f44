/// The endpoint as the engine sees it, one state at a time (NIO's typed state machines are the
/// model): reachable, or unreachable with uploads paused and one probe at a time, 1, 2, 4 ... s
/// apart up to a cap. Each event returns what changed, so the engine logs and marks it.
public enum EndpointState: Equatable, Sendable {
    /// Uploads go out as slots free up.
    case reachable
    /// Unreachable: no upload goes out until `Outage.nextProbe`, then one probe.
    case waitingToProbe(Outage)
    /// Unreachable: one probe is out; its outcome decides.
    case probing(Outage)

    /// Since when the endpoint is unreachable and how often to probe it.
    public struct Outage: Equatable, Sendable {
        public var since: Timestamp
        /// What the first failed attempt said (for the log and `spoold status`).
        public var reason: String
        public var nextProbe: Timestamp
        public var probeInterval: Double
    }

    /// What an ended attempt changed.
    public enum Change: Equatable, Sendable {
        case none
        /// The endpoint just became unreachable: pause uploads, say so.
        case wentDown(Outage)
        /// The endpoint answered again after an outage that began at `since`.
        case cameBack(since: Timestamp)
    }

    /// The outage, if the endpoint is unreachable.
    public var outage: Outage? {
        switch self {
        case .reachable: nil
        case .waitingToProbe(let outage), .probing(let outage): outage
        }
    }

    /// When the next probe may go, while one may (a probe in flight wakes the engine by its completion).
    public var nextProbe: Timestamp? {
        if case .waitingToProbe(let outage) = self { return outage.nextProbe }
        return nil
    }

    /// Takes the probe's slot if it is due: true means send exactly one upload, as the probe.
    public mutating func startProbe(now: Timestamp) -> Bool {
        guard case .waitingToProbe(let outage) = self, outage.nextProbe <= now else { return false }
        self = .probing(outage)
        return true
    }

    /// The probe's slot was taken but nothing was due to send: wait for the next chance.
    public mutating func probeNotSent() {
        if case .probing(let outage) = self { self = .waitingToProbe(outage) }
    }

    /// An attempt ended with an outcome of `class`. An outage or configuration outcome starts an outage (or, from
    /// the probe, doubles the wait up to `maximumProbeSeconds`); any other outcome ends it.
    public mutating func attemptEnded(
        _ outcomeClass: UploadOutcome.Class, isProbe: Bool, reason: @autoclosure () -> String, now: Timestamp,
        maximumProbeSeconds: Double
    ) -> Change {
        guard outcomeClass.pausesUploads else {
            guard let outage else { return .none }
            self = .reachable
            return .cameBack(since: outage.since)
        }
        switch self {
        case .reachable:
            let outage = Outage(since: now, reason: reason(), nextProbe: now.adding(seconds: 1), probeInterval: 1)
            self = .waitingToProbe(outage)
            return .wentDown(outage)
        case .probing(var outage), .waitingToProbe(var outage):
            // An upload that was out before the outage began changes nothing: the probe decides.
            guard isProbe else { return .none }
            outage.probeInterval = min(outage.probeInterval * 2, maximumProbeSeconds)
            outage.nextProbe = now.adding(seconds: outage.probeInterval)
            self = .waitingToProbe(outage)
            return .none
        }
    }
}
