import SpoolCore
import SpoolStore
import SpoolSystem
import Synchronization

/// The part logs' records (an S3 upload id, a part's ETag, a tus upload URL, a start-over) are
/// performed here, in the loop, through the spool: an upload's driver asks for each record its
/// machine returns (`PartRecorder`, posted like a report) and goes on only once the engine says
/// it is durable. The record is written at once and its sync handed to the `DurabilityWorker`
/// with the commits' (in the order handed over), so the loop never waits on the disk; the driver
/// is answered once the sync is made. One writer of the spool: the drivers only read a log as
/// their attempt begins.
///
/// A record the spool cannot write or sync is the daemon failing, like a failed sync of a round:
/// it stops with `SpoolError.progressNotRecorded`, with nothing more acknowledged. A record too
/// long for the log (`PartJournalRefusal`) is the server's answer at fault: the driver hears it,
/// and its attempt fails as the item's.
///
/// A start-over is written once, here, for both protocols: the old upload's end (an S3 abort, a
/// tus termination) is owed durably in `aborts.log` when it may still exist, then the log goes,
/// and the start-over and the abort owed are said. A log of the other protocol's upload, found
/// as an attempt begins, is given up the same way (`StartOverRecord(otherKind:)`).
extension Engine {
    /// A record whose sync was handed over, waiting to be made.
    struct RecordInFlight {
        var request: PartRecordRequest
        var ticket: Int
        /// For a start-over: the old upload's end, owed once the sync is made.
        var owed: OwedAbort?
    }

    /// Writes the record `request` asks for and hands its sync over (answered at once when there
    /// is none: a direct upload's log before its blob is durable, a start-over owing nothing); a
    /// failure to write it marks the round (`Round.recordFailure`): the daemon stops.
    func performRecord(_ request: PartRecordRequest, now: Timestamp, into round: inout Round) {
        let log = request.recorder.log
        // The offsets noted before the record belong before it in the log.
        request.recorder.writeNotedOffsets()
        do {
            switch request.record {
            case .startOver(let over):
                guard let owed = over.owed(by: request.recorder.id, since: now) else {
                    return startedOver(request, owed: nil, now: now)
                }
                let work: SyncWork
                do {
                    work = try log.giveUpUpload(owing: owed)
                } catch let refusal as PartJournalRefusal {
                    // Unrecordable: the driver aborts an S3 upload at once; a tus server's expiry removes its own.
                    log.discard()
                    noteMultipart(request.recorder.id, over.note, now: now)
                    return request.then(.refused(refusal))
                }
                handOver(work, for: request, owed: owed, now: now, into: &round)
            default:
                let work = try log.write(request.record)
                handOver(work, for: request, owed: nil, now: now, into: &round)
            }
        } catch let refusal as PartJournalRefusal {
            request.then(.refused(refusal))
        } catch {
            round.recordFailure = round.recordFailure ?? (request.recorder.id, Engine.notRecorded(request.record, error))
        }
    }

    /// Hands `work` to the worker; with nothing to sync (a direct upload's log before its blob
    /// is durable), the record counts at once.
    private func handOver(_ work: SyncWork, for request: PartRecordRequest, owed: OwedAbort?, now: Timestamp, into round: inout Round) {
        let record = RecordInFlight(request: request, ticket: work.isEmpty ? 0 : durability.handOver(work), owed: owed)
        if work.isEmpty { return made(record, now: now) }
        records.append(record)
        // Made at once when the worker runs on this thread: a failure stops the daemon in this step.
        if let failure = durability.failure, let failed = firstRecordNotMade() {
            round.recordFailure = round.recordFailure ?? (failed.request.recorder.id, Engine.notRecorded(failed.request.record, failure))
        }
    }

    /// Answers the records whose syncs were made (in the order they were asked for).
    func advanceRecords(now: Timestamp) {
        while let first = records.first, durability.isMade(first.ticket) {
            records.removeFirst()
            made(first, now: now)
        }
    }

    private func made(_ record: RecordInFlight, now: Timestamp) {
        if case .startOver = record.request.record {
            startedOver(record.request, owed: record.owed, now: now)
        } else {
            record.request.recorder.log.reachedDurable(record.request.record)
            record.request.then(.recorded)
        }
    }

    /// The old upload's end is owed (durable) or nothing is: the log goes, the start-over and
    /// what is owed are said, and the driver begins anew.
    private func startedOver(_ request: PartRecordRequest, owed: OwedAbort?, now: Timestamp) {
        guard case .startOver(let over) = request.record else { preconditionFailure("not a start-over: \(request.record)") }
        let id = request.recorder.id
        request.recorder.log.discard()
        noteMultipart(id, over.note, now: now)
        if let owed { noteMultipart(id, .abortOwed(owed), now: now) }
        request.then(.recorded)
    }

    /// The record of the first sync that failed, when it is a record's (rather than a commit's):
    /// the daemon stops with it.
    func recordNotMade(_ failure: any Error) -> SpoolError? {
        firstRecordNotMade().map {
            .progressNotRecorded(item: $0.request.recorder.id.description, cause: Engine.notRecorded($0.request.record, failure))
        }
    }

    /// The record waiting for the first sync not made, unless a commit waits for an earlier one.
    private func firstRecordNotMade() -> RecordInFlight? {
        guard let first = records.first(where: { !durability.isMade($0.ticket) }),
              !commits.contains(where: { !durability.isMade($0.ticket) && $0.ticket < first.ticket })
        else { return nil }
        return first
    }

    /// Why `record` is not recorded, for the operator.
    static func notRecorded(_ record: PartRecord, _ error: any Error) -> String {
        let what = switch record {
        case .s3Upload: "the multipart upload"
        case .part(let number, _): "part \(number)"
        case .tusUpload: "the tus upload URL"
        case .startOver(let over): if case .tus = over.owing { "the termination of the old tus upload" } else { "the abort of the old upload" }
        }
        return "cannot record \(what) in the spool's part log: \(error)"
    }

    /// The least time between two writes of the offsets tus uploads note (`writeNotedOffsets`).
    static let offsetWriteSeconds = 1.0

    /// Writes the offsets tus uploads noted (hints, never synced), at most once a second: a PATCH
    /// per chunk wakes the loop once for the first offset after a write, and the rest wait for
    /// that second's end (`offsetsDue`), a few written together.
    func writeNotedOffsets(now: Timestamp) {
        guard now >= nextOffsetWrite else { return }
        var wrote = false
        for upload in uploads.values where upload.progress.recorder?.writeNotedOffsets() == true { wrote = true }
        if wrote { nextOffsetWrite = now.adding(seconds: Engine.offsetWriteSeconds) }
    }

    /// When noted offsets are to be written, if some wait.
    var offsetsDue: Timestamp? {
        uploads.values.contains { $0.progress.recorder?.hasNotedOffsets == true } ? nextOffsetWrite : nil
    }
}

/// A record an upload's driver asks for, posted to the engine (`TransportReport.record`).
public struct PartRecordRequest: Sendable {
    let recorder: UploadRecorder
    let record: PartRecord
    /// The driver's continuation (it goes on on its own queue).
    let then: @Sendable (PartRecorded) -> Void
}

/// What an upload with a part log is given to record its progress (`PartRecorder`): it reads the
/// log as the attempt begins, and posts every record to the engine, which performs it.
final class UploadRecorder: PartRecorder, @unchecked Sendable {
    let log: PartLog
    private let events: any EngineEventSource
    /// The tus offsets noted and not written yet, and whether the loop was woken for them.
    private let noted = Mutex<(offsets: [Int64], wakeAsked: Bool)>(([], false))

    init(log: PartLog, events: any EngineEventSource) { (self.log, self.events) = (log, events) }

    var id: ItemID { log.id }

    func load() -> LoggedUpload? { log.load() }

    func record(_ record: PartRecord, then: @escaping @Sendable (PartRecorded) -> Void) {
        events.report(.record(PartRecordRequest(recorder: self, record: record, then: then)))
    }

    /// Kept until the engine writes it (`Engine.writeNotedOffsets`); the first offset noted
    /// after a write wakes the loop, the rest wait for it.
    func noteOffset(_ offset: Int64) {
        let wakes = noted.withLock { noted in
            noted.offsets.append(offset)
            defer { noted.wakeAsked = true }
            return !noted.wakeAsked
        }
        if wakes { events.wake() }
    }

    var hasNotedOffsets: Bool { noted.withLock { !$0.offsets.isEmpty } }

    /// Writes the offsets noted since the last call, each with its crash point (one per PATCH);
    /// says whether there were any. On the engine's loop.
    @discardableResult
    func writeNotedOffsets() -> Bool {
        let offsets = noted.withLock { noted in
            defer { noted = ([], false) }
            return noted.offsets
        }
        for offset in offsets {
            log.recordOffset(offset)
            log.reached(TusStep.patched)
        }
        return !offsets.isEmpty
    }

    func reached(_ step: MultipartStep) { log.reached(step) }

    func reached(_ step: TusStep) { log.reached(step) }
}
