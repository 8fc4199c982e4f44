import SpoolCore
import SpoolStore

/// What spoold had promised when the power went, read from a trace's events, and the check of a
/// recovered spool against it:
///
/// 1. every acknowledged file exists exactly once (a blob in pending/, failed/ or done/, or still
///    in incoming/), or was accepted by the endpoint (then at most once);
/// 2. nothing whose success was made durable is left to be uploaded again (in pending/, inflight/,
///    failed/ or incoming/): only what was in flight may be;
/// 3. attempts never go back past what was sent: an item whose claim was durable (or whose
///    answer was recorded) keeps at least that attempt, one whose request was out before its
///    claim was synced at least the one before, even if its answer came meanwhile
///    (docs/guarantees.md: a power cut before the claim's sync loses the count of that attempt,
///    and its answer with it);
/// 4. an answered attempt stays answered: once its outcome was recorded (a 5xx, a final 4xx), the
///    item's history keeps it (it counts against `--max-attempts`, not as interrupted), and a
///    purge that returned stays done;
/// 5. a multipart upload begun and neither completed nor confirmed aborted stays named, in its
///    item's part log or owed in `parts/aborts.log` (else it is left at the store for good), and
///    owed there once its item is in failed/ (nothing else would send its abort);
/// 6. every item left is whole and uploadable (json parses, sizes agree), the index parses, a
///    part log keeps the parts it vouched for while its item is to be sent again, and vouches
///    only for the bytes its item's blob holds.
public struct PowerCutPromises {
    public struct Acknowledged {
        public var payload: [UInt8]
        public var what: String
    }

    public private(set) var acknowledged: [Acknowledged] = []
    /// Payloads the endpoint accepted.
    public private(set) var accepted = Set<[UInt8]>()
    /// Payloads whose success was durable (accepted, then a step ended).
    public private(set) var successDurable = Set<[UInt8]>()
    /// Payloads an operator purged (they may be gone).
    public private(set) var purged = Set<[UInt8]>()
    /// The attempt each item must have kept at least.
    public private(set) var attemptFloor: [ItemID: Int] = [:]
    public private(set) var payloadOf: [ItemID: [UInt8]] = [:]
    /// Attempts whose answer (not a hand-back) was recorded: they stay in the item's history.
    public private(set) var answeredAttempts: [ItemID: Set<Int>] = [:]
    /// Items purged for good.
    public private(set) var gone = Set<ItemID>()
    /// Parts each item's log vouched for.
    public private(set) var loggedParts: [ItemID: Set<Int>] = [:]
    /// Multipart uploads begun, by upload id, with their item, until the store confirmed aborting them.
    public private(set) var openUploads: [String: ItemID] = [:]

    private struct Send {
        var attempt: Int
        var direct: Bool
        var stepEnded = false
        var answer: PowerCutEvent.Answer?
        var answerRecorded = false
    }

    public init(_ events: [PowerCutEvent]) {
        var sends: [ItemID: Send] = [:]
        for event in events {
            switch event {
            case .acknowledged(let payload, let what):
                acknowledged.append(Acknowledged(payload: payload, what: what))
            case .sent(let id, let attempt, let payload, let direct):
                payloadOf[id] = payload
                sends[id] = Send(attempt: attempt, direct: direct)
            case .answered(let id, let answer):
                sends[id]?.answer = answer
                if answer == .accepted, let payload = payloadOf[id] { accepted.insert(payload) }
            case .retrying(let id):
                sends[id] = nil
                answeredAttempts[id] = nil
            case .purging(let id):
                sends[id] = nil
                answeredAttempts[id] = nil
                loggedParts[id] = nil
                if let payload = payloadOf[id] { purged.insert(payload) }
            case .purged(let id):
                gone.insert(id)
            case .partsLogged(let id, let parts):
                loggedParts[id, default: []].formUnion(parts)
            case .uploadBegun(let id, let uploadID):
                openUploads[uploadID] = id
            case .abortConfirmed(let uploadID):
                openUploads[uploadID] = nil
            case .settled:
                for (id, send) in sends {
                    if send.answer == nil { sends[id]?.stepEnded = true } else { sends[id]?.answerRecorded = true }
                    if send.answer == .accepted, let payload = payloadOf[id] { successDurable.insert(payload) }
                    if send.answer == .refused { answeredAttempts[id, default: []].insert(send.attempt) }
                }
            }
        }
        for (id, send) in sends {
            let floor: Int
            if send.answer == .handedBack {
                floor = send.attempt - 1
            } else if send.answer != nil && send.answerRecorded {
                floor = send.attempt
            } else if send.direct {
                floor = 0  // nothing was recorded for it: it may be taken again as a new item
            } else if send.stepEnded {
                floor = send.attempt
            } else {
                floor = send.attempt - 1
            }
            if floor > 0 { attemptFloor[id] = floor }
        }
    }

    /// The promises `tree` (a spool after start-up recovery) breaks, as messages.
    public func broken(by tree: FileTree) -> [String] {
        var problems: [String] = []
        let spool = SpoolView(tree)
        var places: [[UInt8]: [String]] = [:]
        for (path, content) in spool.incoming { places[content, default: []].append("incoming/\(path)") }
        for item in spool.items {
            if let blob = item.blob { places[blob, default: []].append("\(item.folder)/\(item.id).a\(item.attempt).blob") }
        }

        for ack in acknowledged where !purged.contains(ack.payload) {
            let found = places[ack.payload] ?? []
            if found.isEmpty && !accepted.contains(ack.payload) {
                problems.append("lost: \(ack.what)")
            } else if found.count > 1 {
                problems.append("\(ack.what) is in \(found.count) places: \(found.joined(separator: ", "))")
            }
        }
        for payload in successDurable {
            let again = (places[payload] ?? []).filter { !$0.hasPrefix("done/") }
            if !again.isEmpty {
                problems.append("uploaded again after its success was durable: \(again.joined(separator: ", "))")
            }
        }
        for (id, floor) in attemptFloor.sorted(by: { $0.key < $1.key }) {
            guard let payload = payloadOf[id], !accepted.contains(payload), !purged.contains(payload) else { continue }
            if let item = spool.items.first(where: { $0.id == id }) {
                if item.attempt < floor {
                    problems.append("\(id): attempts went back to \(item.attempt) in \(item.folder)/; attempt \(floor) was counted")
                }
            } else if !(places[payload] ?? []).isEmpty {
                problems.append("\(id): its attempts were forgotten (attempt \(floor) was counted); its payload is back as \((places[payload] ?? []).joined(separator: ", "))")
            }
        }
        let promised = Set(acknowledged.map(\.payload))
        for id in gone.sorted() where spool.items.contains(where: { $0.id == id }) {
            problems.append("\(id) came back after its purge returned")
        }
        for (id, attempts) in answeredAttempts.sorted(by: { $0.key < $1.key }) {
            guard let item = spool.items.first(where: { $0.id == id }), item.folder != "done",
                  let metadata = item.json.flatMap({ try? MetadataCodec.decode($0) })
            else { continue }
            for attempt in attempts.sorted() where !metadata.attempts.contains(where: { $0.number == attempt && $0.isAnswered }) {
                problems.append("\(id): the recorded answer to attempt \(attempt) is no longer in its history (now \(item.folder)/.a\(item.attempt))")
            }
        }
        for (id, parts) in loggedParts.sorted(by: { $0.key < $1.key }) {
            guard let payload = payloadOf[id], !accepted.contains(payload) else { continue }
            guard let item = spool.items.first(where: { $0.id == id }) else {
                if !(places[payload] ?? []).isEmpty {
                    problems.append("\(id): its logged parts \(parts.sorted()) were forgotten: its payload is back as \((places[payload] ?? []).joined(separator: ", "))")
                }
                continue
            }
            if item.folder == "failed" { continue }  // given up: its upload is owed an abort (below)
            let logged = spool.partLogs[id].flatMap { PartLogCodec.decode($0).state }
            let missing = parts.subtracting([0]).subtracting(logged.map { Set($0.parts.keys) } ?? [])
            if logged == nil || !missing.isEmpty {
                problems.append(logged == nil
                    ? "\(id): its part log is gone (the upload would start over; it vouched for parts \(parts.sorted()))"
                    : "\(id): its part log lost parts \(missing.sorted()) it vouched for (they would be sent again)")
            }
        }
        let owed = Set(spool.abortLog.map { AbortLogCodec.decode($0).owed.map(\.uploadID) } ?? [])
        for (uploadID, id) in openUploads.sorted(by: { $0.key < $1.key }) {
            if owed.contains(uploadID) || payloadOf[id].map(accepted.contains) == true { continue }
            if spool.items.contains(where: { $0.id == id && $0.folder == "failed" }) {
                problems.append("\(id): parked in failed/ with its multipart upload \(uploadID) not owed in aborts.log: nothing would abort it")
                continue
            }
            if spool.partLogs[id].flatMap({ PartLogCodec.decode($0).state })?.uploadID != uploadID {
                problems.append("\(id): its multipart upload \(uploadID) is named nowhere (no part log, not owed in aborts.log): it would be left at the store")
            }
        }
        for item in spool.items {
            let name = "\(item.folder)/\(item.id).a\(item.attempt)"
            switch (item.json, item.blob) {
            case (nil, _):
                problems.append("\(name): a blob without its json after recovery")
            case (let json?, let blob):
                guard let metadata = try? MetadataCodec.decode(json) else {
                    problems.append("\(name).json does not parse")
                    continue
                }
                if let blob, promised.contains(blob), item.folder == "pending", metadata.size != Int64(blob.count) {
                    problems.append("\(name): its json says \(metadata.size) B, its blob holds \(blob.count) B (it would be parked in failed/)")
                }
                if blob == nil && item.folder != "failed" { problems.append("\(name): a json without its blob after recovery") }
            }
            if item.folder == "inflight" { problems.append("\(name): still in inflight/ after recovery") }
        }
        if let index = spool.index {
            if IndexLogCodec.decode(index).damage != .none { problems.append("index.wal does not parse after recovery") }
        } else {
            problems.append("no index.wal after recovery")
        }
        for (id, log) in spool.partLogs {
            guard let state = PartLogCodec.decode(log).state else { continue }
            guard let item = spool.items.first(where: { $0.id == id }), let blob = item.blob else {
                problems.append("parts/\(id).log is left without its item")
                continue
            }
            if let payload = payloadOf[id], promised.contains(payload), !state.parts.isEmpty, state.size == Int64(blob.count), blob != payload {
                problems.append("parts/\(id).log vouches for \(state.parts.count) part(s) of bytes its blob no longer holds")
            }
        }
        return problems
    }
}
