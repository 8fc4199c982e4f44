import SpoolCore
import SpoolStore

extension Engine {
    /// Whether `ingest` may take files in now. Intake runs only while the last try found room and
    /// the index reserve is whole: on a full disk the room left is for recording outcomes. A
    /// paused intake first restores the reserve when it tries again.
    func intakeMayRun(now: Timestamp) throws -> Bool {
        guard intake.mayTry(now: now) else { return false }
        // Uploaded items are unlinked in the background: let their space be free before looking.
        if intake.pausedSince != nil { try spool.drainRemovals() }
        if !spool.reserve.isWhole && !spool.reserve.fill() {
            intakeFoundNoRoom(now: now, cause: "no room to restore \(SpaceReserve.fileName)")
            return false
        }
        return true
    }

    /// Items taken in beyond the `2 × concurrency` kept ready while uploads run.
    static let ingestAhead = 32

    /// Largest batch to take now: one file at a time while paused, so one that fits is not held
    /// back by a batch that does not. While the endpoint answers, files are taken in step with
    /// the uploads: none while `2 × concurrency` items are due, else enough for `ingestAhead`
    /// more (or as many as there are spare jsons to write, `Spool.spareJSONCount`); the rest
    /// wait in incoming/ for the next round. So a big drop starts uploading at once instead of
    /// after its whole ingest, each batch's two syncs serve dozens of files, and a steady flow
    /// writes the jsons of uploaded items again instead of creating files. During an outage, and
    /// outside the upload windows, everything is taken, up to `ingestBatchLimit`.
    func intakeBatchLimit(now: Timestamp) -> Int {
        guard intake.pausedSince == nil else { return 1 }
        guard endpoint.outage == nil && !uploadsHeld else { return Engine.ingestBatchLimit }
        let low = 2 * configuration.concurrency
        let ready = due.countDue(at: now, upTo: low)
        guard ready < low else { return 0 }
        return min(Engine.ingestBatchLimit, max(low + Engine.ingestAhead - ready, spool.spareJSONCount))
    }

    /// Files left announced by `intakeBatchLimit` are taken when an upload ends (its completion
    /// wakes the engine) or, while requests are limited, when the next may start, not at once.
    var intakeFollowsUploads: Bool {
        intake.pausedSince == nil && endpoint.outage == nil && !uploadsHeld && (!uploads.isEmpty || pacer.isLimited)
    }

    /// An add found the disk full (nothing of it was kept): pause, say so once, keep uploading.
    func intakeFoundNoRoom(now: Timestamp, cause: String) {
        guard intake.foundNoRoom(now: now) else { return }
        IntakeMarker.write(since: now, in: spool)
        log.warning("intake paused: the spool's file system is full (\(cause)); files wait in incoming/, uploads go on; trying again every \(Int(IntakeGate.retrySeconds)) s and after each upload")
    }

    /// An add succeeded: a pause, if any, is over.
    func intakeFoundRoom(now: Timestamp) {
        guard let since = intake.foundRoom() else { return }
        IntakeMarker.remove(in: spool)
        log.info("intake resumed: room on the spool's file system again after \(formatSeconds(since.seconds(until: now)))")
    }
}
