import SpoolCore
import SpoolStore
import SpoolTransport

/// What S3 multipart uploads tell the daemon beyond their outcomes (`MultipartNote`): said in
/// the log and counted in the metrics; and the AbortMultipartUpload requests the daemon owes
/// (`AbortSchedule`, recorded in `SPOOL/parts/aborts.log`), sent and sent again until the store
/// confirms them.
extension Engine {
    func takeReports(_ reports: [TransportReport], now: Timestamp, into round: inout Round) {
        for report in reports {
            switch report {
            case .multipart(let id, let note):
                noteMultipart(id, note, now: now)
            case .abortEnded(let abort, let outcome):
                abortEnded(abort, outcome, now: now)
            case .record(let request):
                performRecord(request, now: now, into: &round)
            }
        }
    }

    /// Says `note` of `id`'s upload, tells the observers, and schedules an abort it owes.
    func noteMultipart(_ id: ItemID, _ note: MultipartNote, now: Timestamp) {
        say(note, of: id)
        if case .abortOwed(let abort) = note { aborts.add(abort, now: now) }
        observers.multipartNoted(id, note)
    }

    private func say(_ note: MultipartNote, of id: ItemID) {
        switch note {
        case .resumed(let resume):
            log.info(
                "resuming the multipart upload of \(id) (upload \(resume.uploadID)): the store lists \(resume.listed) of its "
                    + "\(resume.partCount) part(s), \(resume.kept) of them as its part log records them (\(resume.recorded) recorded); "
                    + "sending \(resume.partCount - resume.kept) part(s), \(ByteText.format(resume.bytesToSend))")
        case .tusResumed(let resume):
            log.info(
                "resuming the tus upload of \(id) (\(resume.uploadURL)): the server holds \(ByteText.format(resume.offset)) of "
                    + "\(ByteText.format(resume.length)); sending \(ByteText.format(resume.length - resume.offset))")
        case .startedOver(let over) where over.isTus:
            log.info(
                "starting the tus upload of \(id) over (\(over.reason.rawValue)): \(over.detail); "
                    + "throwing away \(ByteText.format(over.discardedBytes)) the server held of upload \(over.oldUploadID)")
        case .startedOver(let over):
            log.info(
                "starting the multipart upload of \(id) over (\(over.reason.rawValue)): \(over.detail); "
                    + "throwing away \(over.discardedParts) part(s), \(ByteText.format(over.discardedBytes)), of upload \(over.oldUploadID)")
        case .completionChecked(let check):
            switch check.decision {
            case .completed(let why):
                log.info("\(id): \(check.doubt); asked the store: \(why): uploaded")
            case .startOver(let why):
                log.info("\(id): \(check.doubt); asked the store: \(why): not uploaded")
            case .retryLater(let why):
                log.info("\(id): \(check.doubt); asked the store: \(why); the upload is kept for the next attempt")
            case .headObject:
                break
            }
        case .abortOwed(let abort):
            log.debug("\(id): upload \(abort.uploadID) given up; \(abort.requestName) is owed (\(AbortLog.fileName))")
        }
    }

    /// The uploads of the round's multipart items parked in failed/ are given up: each one's end
    /// (an S3 abort, a tus termination) is written to `aborts.log` as owed. Returns what is owed,
    /// and the syncs that make it durable, which `commitRound` hands to the worker first among the
    /// round's: the debt is durable before the item moves to failed/, and before its part log, the
    /// only other place that names the upload, goes (`gaveUp`, once the round is done); the loop
    /// never waits for it. A failure to write it is the spool failing (thrown).
    func oweAborts(of round: Round, now: Timestamp) throws -> (owed: [OwedAbort], durable: [SyncWork]) {
        var owed: [OwedAbort] = []
        var durable: [SyncWork] = []
        for (id, failed) in round.finishedMultipart where failed {
            do {
                guard let (abort, syncs) = try spool.partLogs.oweEnd(of: id, now: now) else { continue }
                owed.append(abort)
                durable.append(syncs)
            } catch let refusal as PartJournalRefusal {
                log.warning("\(id): its multipart upload cannot be recorded for an abort (\(refusal)); its part log is kept, and a lifecycle rule on the bucket removes the upload")
            } catch {
                for syncs in durable { syncs.discard() }
                throw error
            }
        }
        return (owed, durable)
    }

    /// The round that parked `owed`'s item is done, so the debt is durable: the item's part log
    /// goes, and the abort owed is said and sent.
    func gaveUp(_ owed: OwedAbort, now: Timestamp) {
        spool.partLogs.remove(owed.id)
        noteMultipart(owed.id, .abortOwed(owed), now: now)
    }

    /// Sends the aborts that are due (a few at once).
    func sendDueAborts(now: Timestamp) {
        let events = self.events
        for abort in aborts.takeDue(now: now) {
            log.debug("sending \(abort.requestName) (\(abort.id), \(abort.url))")
            transport.abortUpload(abort) { outcome in events.report(.abortEnded(abort, outcome)) }
        }
    }

    private func abortEnded(_ abort: OwedAbort, _ outcome: UploadOutcome, now: Timestamp) {
        let result = aborts.ended(
            abort.uploadID, outcome: outcome, policy: configuration.policy, now: now, unitRandom: clock.unitRandom())
        switch result {
        case .confirmed:
            do {
                try spool.partLogs.aborts.confirmed(abort.uploadID)
            } catch {
                log.warning("cannot record in \(spool.path)/parts/\(AbortLog.fileName) that upload \(abort.uploadID) was aborted (\(error)); the next start sends the abort again")
            }
            switch abort.kind {
            case .s3Multipart: log.info("aborted multipart upload \(abort.uploadID) of \(abort.id) (\(outcome.summary))")
            case .tusTermination: log.info("terminated tus upload \(abort.uploadID) of \(abort.id) (\(outcome.summary))")
            }
        case .retry(let at, let why):
            log.info("\(abort.requestName) (\(abort.id)) failed (\(why)); next try in \(formatSeconds(now.seconds(until: at)))")
        case .held(let why):
            let cleanup = abort.kind == .s3Multipart ? "a lifecycle rule on the bucket also removes it" : "the tus server's expiry also removes it"
            log.warning("\(abort.requestName) (\(abort.id)) refused (\(why)); it stays owed and is sent again at the next start (\(cleanup))")
        case .unknown:
            return
        }
        observers.abortEnded(abort, result)
    }
}
