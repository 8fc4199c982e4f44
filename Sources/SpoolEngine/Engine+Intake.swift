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

    /// Largest batch to try: one file at a time while paused, so one that fits is not held back
    /// by a batch that does not.
    var intakeBatchLimit: Int { intake.pausedSince == nil ? Engine.ingestBatchLimit : 1 }

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
