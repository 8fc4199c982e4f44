import SpoolCore

/// What a workload tells the explorer about its promises as it runs (ALICE's "checker"
/// needs to know what was acknowledged, and when).
public enum PowerCutEvent: Sendable, CustomStringConvertible {
    /// From here on, `payload` must survive any power cut: `enqueue` exited 0 for it, or its
    /// producer put it in incoming/ and synced it. `what` names it in messages.
    case acknowledged(payload: [UInt8], what: String)
    /// A request for `id`, attempt `attempt`, carrying `payload`, started. `direct`: the file was
    /// sent straight from incoming/ (nothing recorded for it yet).
    case sent(id: ItemID, attempt: Int, payload: [UInt8], direct: Bool)
    /// The endpoint answered `id`'s request in flight.
    case answered(id: ItemID, answer: Answer)
    /// An operator is about to `spoold retry` `id`: its attempts may start again at 0.
    case retrying(id: ItemID)
    /// An operator is about to purge `id`: it may be gone.
    case purging(id: ItemID)
    /// `spoold purge` returned for `id`: it must not come back.
    case purged(id: ItemID)
    /// `id`'s S3 multipart upload `uploadID` was begun (CreateMultipartUpload answered, its part
    /// log written): until it completes or the store confirms its abort, spoold must name it
    /// somewhere durable (the part log, or `parts/aborts.log` as owed), or it is left at the store.
    case uploadBegun(id: ItemID, uploadID: String)
    /// The store confirmed aborting `uploadID`.
    case abortConfirmed(uploadID: String)
    /// `id`'s part log vouches for its upload (part 0) and these parts (`PartLog` said they are
    /// durable): while the item is to be sent again, a crash may re-send only parts not among them.
    case partsLogged(id: ItemID, parts: Set<Int>)
    /// The engine's step is over and the spool's background work drained: what it claimed,
    /// recorded and answered is durable now, as far as spoold promises.
    case settled

    public var description: String {
        switch self {
        case .acknowledged(_, let what): "acknowledged: \(what)"
        case .sent(let id, let attempt, _, let direct): "request for \(id) attempt \(attempt)\(direct ? " (direct)" : "") sent"
        case .answered(let id, let answer): "\(id) answered (\(answer))"
        case .retrying(let id): "retrying \(id)"
        case .purging(let id): "purging \(id)"
        case .purged(let id): "\(id) purged"
        case .partsLogged(let id, let parts): "\(id)'s part log holds parts \(parts.sorted())"
        case .uploadBegun(let id, let uploadID): "\(id)'s multipart upload \(uploadID) begun"
        case .abortConfirmed(let uploadID): "the store confirmed aborting \(uploadID)"
        case .settled: "the step settled"
        }
    }

    public enum Answer: Sendable, Equatable {
        /// A 2xx: the payload reached the endpoint.
        case accepted
        /// Any other answer that counts the attempt (a 5xx, a 4xx).
        case refused
        /// An outage: the attempt is handed back (it does not count).
        case handedBack
    }
}
