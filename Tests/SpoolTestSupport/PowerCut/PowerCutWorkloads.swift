import Foundation
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTransport

/// The workloads the power-cut explorer runs: each a short, real use of the spool and the engine
/// (no mocks below the `FileSystem` seam), small enough to explore every crash point. A new path
/// through the spool (the tus upload URL, say) is one more `PowerCutWorkload` here, with its
/// promises noted through `PowerCutRun` (`acknowledged` when spoold says the file is safe).
public enum PowerCutWorkloads {
    /// Every workload, in the order the explorer reports them.
    public static var all: [PowerCutWorkload] {
        [
            firstStart, enqueue, ingest, outcomes, slowDisk, operatorCommands, retryMany, quarantine, direct, multipartQueued,
            multipartDirect, multipartRefused, compaction, keepDone, restart, damaged,
        ]
    }

    /// A daemon that sends to an endpoint the workload answers (nothing listens there).
    public static func configuration(direct: Bool, concurrency: Int = 2, multipartThreshold: Int64? = nil) -> EngineConfiguration {
        var configuration = EngineConfiguration(
            url: URLTemplate("http://127.0.0.1:9/"), concurrency: concurrency, policy: RetryPolicy(), settleSeconds: 0)
        configuration.directUploads = direct
        configuration.multipartThreshold = multipartThreshold
        return configuration
    }

    /// What a workload's `prepare` hands its `run`.
    final class Box<T> {
        var value: T
        init(_ value: T) { self.value = value }
    }

    /// A spool made on first use: its folders and the root's fsync, then one `enqueue`.
    public static var firstStart: PowerCutWorkload {
        PowerCutWorkload("first start", configuration: configuration(direct: false), prepare: { _ in }) { run in
            try run.enqueue([run.payload("first")])
        }
    }

    /// `spoold enqueue`: a small batch copied in (fsync per file and folder), one file renamed in
    /// (`--move`), and a batch of 8 (two `syncfs` around the renames).
    public static var enqueue: PowerCutWorkload {
        PowerCutWorkload("enqueue", configuration: configuration(direct: false), prepare: { try $0.openSpool() }) { run in
            try run.enqueue([run.payload("copied 1"), run.payload("copied 2")])
            try run.enqueue([run.payload("moved")], move: true)
            try run.enqueue((1...8).map { run.payload("batch \($0)") })
        }
    }

    /// Files taken in from incoming/ as items (`--no-direct`): announced by inotify (one in a
    /// subfolder), and one found by the rescan; each claimed, sent and accepted (its json kept as
    /// a spare and written again for the next).
    public static var ingest: PowerCutWorkload {
        PowerCutWorkload("ingest from incoming/", configuration: configuration(direct: false), prepare: { try $0.openSpool() }) { run in
            try run.startEngine(configuration(direct: false))
            try run.drop("a.jpg", run.payload("announced"))
            try run.drop("cam7/b.jpg", run.payload("announced in a subfolder"))
            try run.advance(by: 0)
            try run.answer(.status(201))
            try run.drop("c.jpg", run.payload("scanned"), announce: false)
            try run.advance(by: 61)
            // A producer that never syncs: with --no-direct the file is safe once taken in.
            let unsynced = run.payload("not synced by its producer")
            try run.drop("d.jpg", unsynced, producerSyncs: false)
            try run.advance(by: 0)
            run.acknowledged(unsynced, "incoming/d.jpg (not synced by its producer), taken in as an item")
            try run.drain()
        }
    }

    /// Queued items answered every way: 503 (retried later, then accepted), 400 (parked in
    /// failed/), the endpoint unreachable (attempt handed back, probed, then accepted).
    public static var outcomes: PowerCutWorkload {
        let payloads = Box<[[UInt8]]>([])
        return PowerCutWorkload(
            "claim, retry, final failure, outage", configuration: configuration(direct: false, concurrency: 3),
            prepare: { run in
                payloads.value = [run.payload("retried"), run.payload("refused"), run.payload("outage")]
                try run.enqueue(payloads.value)
            }
        ) { run in
            for payload in payloads.value { run.acknowledged(payload, "enqueued before the run") }
            try run.startEngine(configuration(direct: false, concurrency: 3))
            try run.answer(.status(503))
            try run.answer(.status(400))
            try run.answer(.failed(.connectionRefused))
            try run.drain(step: 30)
        }
    }

    /// The loop ahead of the disk (`Engine+Durability`): every sync waits until the workload
    /// makes it, one at a time, while answers come in and claims go out. A success, a 503
    /// (requeued: its json, its record, its folders) and a 400 (parked) are recorded while other
    /// rounds' claims and syncs are under way; a direct upload's failure becomes an item (`syncfs`).
    public static var slowDisk: PowerCutWorkload {
        let payloads = Box<[[UInt8]]>([])
        let configuration = configuration(direct: true, concurrency: 2)
        return PowerCutWorkload(
            "answers while syncs wait", configuration: configuration,
            prepare: { run in
                payloads.value = (1...3).map { run.payload("queued \($0)") }
                try run.enqueue(payloads.value)
            }
        ) { run in
            for payload in payloads.value { run.acknowledged(payload, "enqueued before the run") }
            try run.startEngine(configuration, holdingSyncs: true)  // claims 1 and 2; their records' sync waits
            try run.answer(.status(201))  // 1: its success waits behind that sync; 3 is claimed
            try run.answer(.status(503))  // 2: its new json waits to be synced
            try run.releaseSyncs()  // the claims' records
            try run.answer(.status(400))  // 3: parked once its json, its record and its folders are durable
            try run.releaseSyncs(count: 2)  // 1's record; 2's json (its record is written now)
            // A file sent straight from incoming/ (nothing queued is due) is refused: it becomes
            // an item, made durable with `syncfs`, while the requeue's syncs still wait.
            let direct = run.payload("direct, refused")
            try run.drop("e.jpg", direct)
            try run.advance(by: 0)
            try run.answer(.status(500))
            try run.drain(step: 30)
        }
    }

    /// `spoold retry` of a failed item and `spoold purge` of a pending one, beside no daemon.
    public static var operatorCommands: PowerCutWorkload {
        let items = Box<[(ItemID, [UInt8])]>([])
        return PowerCutWorkload(
            "retry and purge", configuration: configuration(direct: false),
            prepare: { run in
                let payloads = [run.payload("failed, retried"), run.payload("purged")]
                let ids = try run.enqueue(payloads)
                items.value = Array(zip(ids, payloads))
                let spool = try run.openSpool()
                let pending = ItemLocation(.pending, attempt: 0), inflight = ItemLocation(.inflight, attempt: 1)
                _ = try spool.commit([SpoolTransition(IndexRecord(.claim, ids[0], from: pending, to: inflight))])
                var metadata = try spool.readMetadata(ids[0], at: inflight)
                metadata.failureReason = "HTTP 400 on attempt 1 of 3"
                _ = try spool.commit([SpoolTransition(
                    IndexRecord(.fail, ids[0], from: inflight, to: ItemLocation(.failed, attempt: 1)), metadata: metadata)])
            }
        ) { run in
            let (failed, failedPayload) = items.value[0], (purged, purgedPayload) = items.value[1]
            run.acknowledged(failedPayload, "\(failed), in failed/")
            run.acknowledged(purgedPayload, "\(purged), pending")
            run.counted(failed, attempt: 1, payload: failedPayload)
            let command = try run.openCommandSpool()
            let now = run.clock.now()
            var metadata = try command.readMetadata(failed, at: ItemLocation(.failed, attempt: 1))
            metadata.retriedAt = [now.iso8601]
            metadata.failureReason = nil
            var lifecycle = ItemLifecycle(location: ItemLocation(.failed, attempt: 1), notBefore: now)
            run.fs.note(.retrying(id: failed))
            _ = try command.commit([SpoolTransition(lifecycle.retry(now: now).record(for: failed), metadata: metadata, notBefore: now)])
            run.fs.note(.sent(id: purged, attempt: 0, payload: purgedPayload, direct: false))
            run.fs.note(.purging(id: purged))
            let purge = ItemLifecycle(location: ItemLocation(.pending, attempt: 0), notBefore: now).purge()
            _ = try command.commit([SpoolTransition(purge.record(for: purged))])
            run.fs.note(.purged(id: purged))
        }
    }

    /// Items that cannot be sent: one whose blob is gone (its json alone parked in failed/), one
    /// whose blob changed size (parked with it); a good one beside them is uploaded.
    public static var quarantine: PowerCutWorkload {
        let good = Box<[UInt8]>([])
        return PowerCutWorkload(
            "quarantine", configuration: configuration(direct: false, concurrency: 1),
            prepare: { run in
                good.value = run.payload("good")
                let ids = try run.enqueue([run.payload("blob removed"), run.payload("blob changed"), good.value])
                let pending = run.spoolPath + "/pending/"
                try FileManager.default.removeItem(atPath: pending + "\(ids[0]).a0.blob")
                try Data("shorter".utf8).write(to: URL(fileURLWithPath: pending + "\(ids[1]).a0.blob"))
            }
        ) { run in
            run.acknowledged(good.value, "enqueued before the run")
            try run.startEngine(configuration(direct: false, concurrency: 1))
            try run.drain()
        }
    }

    /// Direct uploads (the default): files sent straight from incoming/ with nothing synced; one
    /// accepted (its blob removed), one refused with a 500 (made a durable item, retried,
    /// accepted), one in flight when a later one is accepted.
    public static var direct: PowerCutWorkload {
        PowerCutWorkload("direct uploads", configuration: configuration(direct: true), prepare: { try $0.openSpool() }) { run in
            try run.startEngine(configuration(direct: true))
            try run.drop("a.jpg", run.payload("direct, accepted"))
            try run.drop("b.jpg", run.payload("direct, refused"))
            try run.advance(by: 0)
            try run.answer(.status(201))
            try run.answer(.status(500))
            try run.drop("c.jpg", run.payload("direct, in flight"))
            try run.advance(by: 0)
            // A producer that never syncs: its file is safe once a failed attempt made it an item.
            let unsynced = run.payload("direct, not synced by its producer, refused")
            try run.drop("d.jpg", unsynced, producerSyncs: false)
            try run.advance(by: 0)
            try run.answer(.status(201))
            try run.answer(.status(503))
            run.acknowledged(unsynced, "incoming/d.jpg (not synced by its producer), made an item by its failed attempt")
            try run.drain(step: 30)
        }
    }

    /// An S3 multipart upload of a queued item: its part log begun (fsynced with its folder),
    /// parts recorded one by one, the success recorded, the log removed.
    public static var multipartQueued: PowerCutWorkload {
        let big = Box<[UInt8]>([])
        let configuration = configuration(direct: false, multipartThreshold: 16)
        return PowerCutWorkload(
            "multipart, queued", configuration: configuration,
            prepare: { run in
                big.value = run.payload("multipart", size: 60)
                try run.enqueue([big.value])
            }
        ) { run in
            run.acknowledged(big.value, "enqueued before the run")
            try run.startEngine(configuration)
            try recordParts(run, size: 60, upTo: 1, durable: true)
            try run.answer(.status(200))
        }
    }

    /// A queued item's multipart upload refused for good (a 400): its upload's abort is recorded
    /// as owed in `parts/aborts.log` before the item goes to failed/ and its part log goes, then
    /// sent; the store confirms it.
    public static var multipartRefused: PowerCutWorkload {
        let big = Box<[UInt8]>([])
        let configuration = configuration(direct: false, multipartThreshold: 16)
        return PowerCutWorkload(
            "multipart, refused (abort owed)", configuration: configuration,
            prepare: { run in
                big.value = run.payload("multipart, refused", size: 60)
                try run.enqueue([big.value])
            }
        ) { run in
            run.acknowledged(big.value, "enqueued before the run")
            try run.startEngine(configuration)
            try recordParts(run, size: 60, upTo: 1, durable: true)
            try run.answer(.status(400))
            try run.drain(answering: .status(204))  // the abort
        }
    }

    /// A direct multipart upload: its part log written unsynced until the upload has run
    /// `directDurableSeconds`, then the blob synced and the log after it.
    public static var multipartDirect: PowerCutWorkload {
        let configuration = configuration(direct: true, multipartThreshold: 16)
        return PowerCutWorkload("multipart, direct", configuration: configuration, prepare: { try $0.openSpool() }) { run in
            try run.startEngine(configuration)
            // A producer that never syncs: the daemon makes the file durable 30 s into its upload.
            let big = run.payload("direct multipart", size: 60)
            try run.drop("big.bin", big, producerSyncs: false)
            try run.advance(by: 0)
            try recordParts(run, size: 60, upTo: 0, durable: false)
            try run.advance(by: configuration.directDurableSeconds)
            run.acknowledged(big, "incoming/big.bin (not synced by its producer), \(configuration.directDurableSeconds) s into its direct upload")
            run.fs.note(.partsLogged(id: try run.request().id, parts: [0]))
            try recordParts(run, size: 60, from: 1, upTo: 1, durable: true)
            try run.answer(.status(200))
        }
    }

    /// What an S3 upload records in its part log (the transport is scripted: the workload asks
    /// the engine for each record, as the driver does): the upload (part 0), then parts
    /// `from...upTo`, each a step of its own (a payload this small is one part of the smallest
    /// size S3 allows). `durable`: the engine says each is durable when it answers (not a direct
    /// upload's first 30 s).
    static func recordParts(_ run: PowerCutRun, size: Int64, from first: Int = 0, upTo last: Int, durable: Bool) throws {
        let request = try run.request()
        guard let engine = run.engine else { throw PowerCutRun.RunError("no engine") }
        if first == 0 {
            let upload = PartLogCodec.State(
                size: size, partSize: S3PartPlan.minimumPartSize, region: "us-east-1", uploadID: "upload-1", url: request.url)
            guard try engine.record(.s3Upload(upload), of: request) == .recorded else { throw PowerCutRun.RunError("not recorded") }
            if durable {
                run.fs.note(.partsLogged(id: request.id, parts: [0]))
                run.fs.note(.uploadBegun(id: request.id, uploadID: "upload-1"))
            }
            try run.settle()
        }
        for part in max(first, 1)...max(last, 1) where part <= last {
            guard try engine.record(.part(part, etag: "\"etag-\(part)\""), of: request) == .recorded else {
                throw PowerCutRun.RunError("not recorded")
            }
            if durable { run.fs.note(.partsLogged(id: request.id, parts: [part])) }
            try run.settle()
        }
    }

    /// Index compaction while the daemon runs (folders synced, the index rewritten to its
    /// header and renamed over the old one), then more work on the new index.
    public static var compaction: PowerCutWorkload {
        let payloads = Box<[[UInt8]]>([])
        return PowerCutWorkload(
            "index compaction", configuration: configuration(direct: false),
            prepare: { run in
                payloads.value = [run.payload("uploaded before compaction 1"), run.payload("uploaded before compaction 2")]
                try run.enqueue(payloads.value)
            }
        ) { run in
            for payload in payloads.value { run.acknowledged(payload, "enqueued before the run") }
            try run.startEngine(configuration(direct: false))
            try run.drain()
            try run.openSpool().compactIndex()
            run.fs.note(.settled)
            try run.enqueue([run.payload("enqueued after compaction")])
            try run.advance(by: 0)
            try run.drain()
        }
    }

    /// `spoold retry --all` of 16 failed items: one commit with 16 jsons to rewrite, made durable
    /// with `syncfs` before and after its renames.
    public static var retryMany: PowerCutWorkload {
        let items = Box<[(ItemID, [UInt8])]>([])
        return PowerCutWorkload(
            "retry --all of 16", configuration: configuration(direct: false),
            prepare: { run in
                let payloads = (1...16).map { run.payload("failed \($0)", size: 24) }
                let ids = try run.enqueue(payloads)
                items.value = Array(zip(ids, payloads))
                let spool = try run.openSpool()
                let pending = ItemLocation(.pending, attempt: 0), failed = ItemLocation(.failed, attempt: 0)
                _ = try spool.commit(ids.map { SpoolTransition(IndexRecord(.fail, $0, from: pending, to: failed)) })
            }
        ) { run in
            let command = try run.openCommandSpool()
            let now = run.clock.now()
            var transitions: [SpoolTransition] = []
            for (id, payload) in items.value {
                run.acknowledged(payload, "\(id), in failed/")
                var metadata = try command.readMetadata(id, at: ItemLocation(.failed, attempt: 0))
                metadata.retriedAt = [now.iso8601]
                var lifecycle = ItemLifecycle(location: ItemLocation(.failed, attempt: 0), notBefore: now)
                transitions.append(SpoolTransition(lifecycle.retry(now: now).record(for: id), metadata: metadata, notBefore: now))
                run.fs.note(.retrying(id: id))
            }
            _ = try command.commit(transitions)
        }
    }

    /// A spool with damage recovery sets aside, never deletes: a record damaged in the middle of
    /// the index (the file is kept aside and the state rebuilt from the folders) and a folder
    /// where an item's json belongs (moved to corrupt/).
    public static var damaged: PowerCutWorkload {
        let payloads = Box<[[UInt8]]>([])
        return PowerCutWorkload(
            "damaged index and folders", configuration: configuration(direct: false),
            prepare: { run in
                payloads.value = [run.payload("next to the damage 1"), run.payload("next to the damage 2")]
                let ids = try run.enqueue(payloads.value)
                var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: run.spoolPath + "/index.wal")))
                bytes += IndexLogCodec.encode(payload: "claim damaged-in-the-middle") + IndexLogCodec.encode(IndexRecord(
                    .claim, ids[0], from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.inflight, attempt: 1)))
                let damage = bytes.count - 60
                bytes[damage] ^= 0xFF
                try Data(bytes).write(to: URL(fileURLWithPath: run.spoolPath + "/index.wal"))
                var generator = ItemIDGenerator(processTag: 0xDA)
                let stray = generator.next(at: run.clock.now(), originalName: "stray")
                try FileManager.default.createDirectory(atPath: run.spoolPath + "/pending/\(stray).a0.json", withIntermediateDirectories: false)
            }
        ) { run in
            for payload in payloads.value { run.acknowledged(payload, "enqueued before the run") }
            try run.startEngine(configuration(direct: false))
            try run.drain()
        }
    }

    /// Successes kept in done/ (`--keep-done`: their moves are completed from the index, with no
    /// folder fsync), then compaction, which syncs done/ before it drops their records.
    public static var keepDone: PowerCutWorkload {
        let payloads = Box<[[UInt8]]>([])
        var configuration = configuration(direct: false)
        configuration.keepDone = true
        return PowerCutWorkload(
            "--keep-done", configuration: configuration,
            prepare: { run in
                payloads.value = [run.payload("kept in done 1"), run.payload("kept in done 2")]
                try run.enqueue(payloads.value)
            }
        ) { run in
            for payload in payloads.value { run.acknowledged(payload, "enqueued before the run") }
            try run.startEngine(configuration)
            try run.drain()
            try run.openSpool().compactIndex()
            run.fs.note(.settled)
        }
    }

    /// Start-up recovery with work to do (an upload interrupted in inflight/, a direct upload's
    /// lone blob, a queued item, the torn tail of the index, an abort log with one abort owed and
    /// one confirmed, which it rewrites), recorded and cut like any workload: a power cut during
    /// recovery is just another crash.
    public static var restart: PowerCutWorkload {
        let state = Box<(claimed: ItemID, claimedPayload: [UInt8], direct: [UInt8], queued: [UInt8])?>(nil)
        let owedAbort = Box<OwedAbort?>(nil)
        return PowerCutWorkload(
            "start-up recovery", configuration: configuration(direct: true),
            prepare: { run in
                let claimedPayload = run.payload("interrupted upload"), queued = run.payload("queued")
                let ids = try run.enqueue([claimedPayload, queued])
                let spool = try run.openSpool()
                _ = try spool.commit([SpoolTransition(
                    IndexRecord(.claim, ids[0], from: ItemLocation(.pending, attempt: 0), to: ItemLocation(.inflight, attempt: 1)))])
                let direct = run.payload("direct, interrupted")
                try run.drop("fox.jpg", direct)
                var generator = ItemIDGenerator(processTag: 0xD1)
                guard case .taken(let fd, _) = spool.takeForDirectUpload("fox.jpg", as: generator.next(at: run.clock.now(), originalName: "fox.jpg"))
                else { throw PowerCutRun.RunError("fox.jpg was not taken") }
                spool.closeBlob(fd)
                state.value = (ids[0], claimedPayload, direct, queued)
                // The torn tail of an append a crash cut: recovery truncates it.
                let index = try FileHandle(forWritingTo: URL(fileURLWithPath: run.spoolPath + "/index.wal"))
                try index.seekToEnd()
                try index.write(contentsOf: Data("R 80 0badf00d claim 2026".utf8))
                try index.close()
                // A failed item's multipart upload whose abort is owed, and one the store confirmed.
                let failed = generator.next(at: run.clock.now(), originalName: "failed.bin")
                let owed = OwedAbort(id: failed, region: "us-east-1", uploadID: "upload-owed", url: "http://127.0.0.1:9/failed.bin", since: run.clock.now())
                let done = OwedAbort(id: failed, region: "us-east-1", uploadID: "upload-aborted", url: "http://127.0.0.1:9/failed.bin", since: run.clock.now())
                try spool.partLogs.aborts.owe([owed, done])
                try spool.partLogs.aborts.confirmed(done.uploadID)
                owedAbort.value = owed
            }
        ) { run in
            guard let state = state.value else { return }
            run.acknowledged(state.claimedPayload, "\(state.claimed), interrupted in inflight/")
            run.acknowledged(state.queued, "enqueued before the run")
            run.acknowledged(state.direct, "incoming/fox.jpg, taken for a direct upload before the run")
            run.counted(state.claimed, attempt: 1, payload: state.claimedPayload)
            if let owed = owedAbort.value { run.fs.note(.uploadBegun(id: owed.id, uploadID: owed.uploadID)) }
            try run.startEngine(configuration(direct: true))
            try run.drain()
        }
    }
}
