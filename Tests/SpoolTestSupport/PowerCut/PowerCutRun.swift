import Foundation
import Glibc
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTransport

/// What a power-cut workload drives: the real `Spool` and `Engine` (stepped by `EmbeddedEngine`
/// under a manual clock, uploads answered by the workload) on a spool whose every call goes
/// through a `PowerCutFileSystem`, and the promises spoold makes on the way, noted in the same
/// trace: a file acknowledged (`enqueue`, a producer's synced drop), a request sent, an answer,
/// the end of an engine step (what it recorded is durable from then on).
public final class PowerCutRun {
    public let fs: PowerCutFileSystem
    public let spoolPath: String
    public let clock: ManualClock
    /// A folder outside the spool for `enqueue`'s source files.
    public let outsidePath: String
    public private(set) var spool: Spool?
    public private(set) var engine: EmbeddedEngine?
    /// The engine's syncs, while a workload holds them (`startEngine(_:holdingSyncs:)`).
    public private(set) var syncs: HeldSyncs?
    private let name: String
    private var made = 0
    private var ids: ItemIDGenerator

    init(fs: PowerCutFileSystem, spoolPath: String, outsidePath: String, name: String, clock: ManualClock) {
        self.fs = fs
        self.spoolPath = spoolPath
        self.outsidePath = outsidePath
        self.name = name
        self.clock = clock
        ids = ItemIDGenerator(processTag: 0xC0FFEE)
    }

    /// Bytes no other file of the run has (so each is recognized wherever it ends up), `size`
    /// long, named after `label`.
    public func payload(_ label: String, size: Int = 48) -> [UInt8] {
        made += 1
        var bytes = Array("\(name) #\(made) \(label) ".utf8)
        var fill = SeededRandom(state: UInt64(made) &* 0x9E37_79B9)
        while bytes.count < size { bytes.append(UInt8(ascii: "a") + UInt8(fill.next() % 26)) }
        return Array(bytes.prefix(max(size, 1)))
    }

    /// Opens the spool through the power-cut file system (creating its folders if missing).
    @discardableResult
    public func openSpool() throws -> Spool {
        if let spool { return spool }
        let opened = try Spool(path: spoolPath, fs: fs)
        spool = opened
        return opened
    }

    /// A second handle on the spool, as `spoold retry` or `purge` open it beside a daemon.
    public func openCommandSpool() throws -> Spool {
        let command = try Spool(path: spoolPath, fs: fs, create: false)
        command.sharesStagingWithRecovery = true
        command.mayReleaseReserve = false
        return command
    }

    /// `spoold enqueue`: each payload written to a file outside the spool (not synced: its
    /// writer never does), added in one batch (copied, or renamed in with `move`), and
    /// acknowledged once `add` returns, as `enqueue` prints the ids then.
    @discardableResult
    public func enqueue(_ payloads: [[UInt8]], move: Bool = false, spool: Spool? = nil) throws -> [ItemID] {
        let spool = try spool ?? openSpool()
        var batch: [NewItem] = []
        for payload in payloads {
            made += 1
            let path = "\(outsidePath)/source-\(made).bin"
            try Data(payload).write(to: URL(fileURLWithPath: path))
            let id = ids.next(at: clock.now(), originalName: "source-\(made).bin")
            let metadata = ItemMetadata(
                id: id, originalName: "source-\(made).bin", size: 0, contentType: "application/octet-stream", createdAt: clock.now())
            batch.append(NewItem(source: .external(path: path, move: move), metadata: metadata))
        }
        var added: [ItemID] = []
        for (result, (item, payload)) in zip(try spool.add(batch), zip(batch, payloads)) {
            guard case .added(let id) = result else { throw RunError("enqueue of \(item.metadata.originalName): \(result)") }
            fs.note(.acknowledged(payload: payload, what: "enqueued \(item.metadata.originalName) as \(id)"))
            added.append(id)
        }
        return added
    }

    /// A producer drops `payload` into `incoming/<path>` the Maildir way, through the file
    /// system: written under a dot-name (mtime a minute back, so it is settled), fsynced, renamed
    /// to its name, the folder fsynced; acknowledged from then on. `producerSyncs: false` leaves
    /// out both fsyncs (and the acknowledgement: nothing was promised). `announce` feeds the
    /// running engine the rename's inotify event; otherwise a scan finds the file.
    public func drop(_ path: String, _ payload: [UInt8], producerSyncs: Bool = true, announce: Bool = true) throws {
        var components = path.split(separator: "/").map(String.init)
        let leaf = components.removeLast()
        let root = try fs.open(spoolPath, relativeTo: nil, flags: [.directory, .followSymlinks], mode: 0)
        defer { fs.close(root) }
        var folder = try fs.open("incoming", relativeTo: root, flags: [.directory], mode: 0)
        defer { fs.close(folder) }
        for component in components {
            if (try? fs.status(of: component, in: folder)) == nil {
                try fs.makeDirectory(component, in: folder, mode: 0o700)
                if producerSyncs { try fs.sync(folder, label: component) }
            }
            let next = try fs.open(component, relativeTo: folder, flags: [.directory], mode: 0)
            fs.close(folder)
            folder = next
        }
        let file = try fs.open("." + leaf, relativeTo: folder, flags: [.writeOnly, .create, .exclusive], mode: 0o600)
        try fs.writeAll(file, payload, label: leaf)
        try fs.setModificationTime(file, milliseconds: clock.now().adding(seconds: -60).millisecondsSinceEpoch)
        if producerSyncs { try fs.sync(file, label: leaf) }
        fs.close(file)
        try fs.rename("." + leaf, in: folder, to: leaf, in: folder)
        if producerSyncs {
            try fs.sync(folder, label: "incoming")
            fs.note(.acknowledged(payload: payload, what: "incoming/\(path), synced by its producer"))
        }
        if announce, let engine { engine.events.feed(InotifyWatcher.movedTo, name: path) }
    }

    /// Starts the daemon on the spool (recovery, scans, its first step) and settles. Its syncs
    /// are made on the loop, each step ending durable, unless `holdingSyncs`: then each waits in
    /// `syncs` until the workload makes it (`release`), the loop running ahead of the disk.
    @discardableResult
    public func startEngine(_ configuration: EngineConfiguration, holdingSyncs: Bool = false) throws -> EmbeddedEngine {
        syncs = holdingSyncs ? HeldSyncs() : nil
        let spool = try openSpool()
        let transport = ScriptedTransport(clock: clock)
        let fs = self.fs
        let inflight = "\(spoolPath)/inflight"
        transport.onStart = { request in
            guard PowerCutRun.abortedUpload(request) == nil else { return }  // an AbortMultipartUpload
            var payload = [UInt8](repeating: 0, count: Int(request.body.size))
            let n = payload.withUnsafeMutableBytes { request.body.read(into: $0.baseAddress!, count: $0.count, at: 0) }
            if n >= 0 { payload.removeSubrange(n...) }
            let json = "\(inflight)/\(ItemFileName(id: request.id, attempt: request.attempt, kind: .json))"
            fs.note(.sent(id: request.id, attempt: request.attempt, payload: payload, direct: access(json, F_OK) != 0))
        }
        let embedded = try EmbeddedEngine(spool: spool, configuration: configuration, clock: clock, transport: transport, syncs: syncs?.thread ?? .loop)
        engine = embedded
        try settle()
        return embedded
    }

    /// Runs the engine `seconds` on, then settles.
    public func advance(by seconds: Double) throws {
        guard let engine else { throw RunError("no engine") }
        try engine.advanceTime(by: seconds)
        try settle()
    }

    /// The upload id of an AbortMultipartUpload request (`DELETE <url>?uploadId=<id>`), or nil.
    static func abortedUpload(_ request: UploadRequest) -> String? {
        guard request.method == "DELETE", let range = request.url.range(of: "?uploadId=") else { return nil }
        return String(request.url[range.upperBound...])
    }

    /// Answers the oldest request in flight, lets the engine record it, and settles.
    public func answer(_ outcome: UploadOutcome) throws {
        guard let engine else { throw RunError("no engine") }
        let waiting = engine.transport.started.map(\.request)
        let answered = engine.transport.started.count - engine.transport.inFlight
        guard answered < waiting.count else { throw RunError("nothing in flight to answer") }
        let request = waiting[answered]
        if let uploadID = PowerCutRun.abortedUpload(request) {
            if AbortSchedule.judge(outcome) == .confirmed { fs.note(.abortConfirmed(uploadID: uploadID)) }
        } else {
            let judged = outcome.class
            fs.note(.answered(id: request.id, answer: judged == .success ? .accepted : judged.handsBack ? .handedBack : .refused))
        }
        try engine.transport.answerNext(outcome)
        try advance(by: 0)
    }

    /// The request in flight for `id` (its part journal, for a multipart upload).
    public func request(for id: ItemID? = nil) throws -> UploadRequest {
        guard let engine else { throw RunError("no engine") }
        guard let started = engine.transport.started.last(where: { id == nil || $0.request.id == id }) else {
            throw RunError("no request started")
        }
        return started.request
    }

    /// Notes a file acknowledged before recording began (in the workload's `prepare`).
    public func acknowledged(_ payload: [UInt8], _ what: String) {
        fs.note(.acknowledged(payload: payload, what: what))
    }

    /// Notes an attempt counted durably before recording began (a claim committed in `prepare`).
    public func counted(_ id: ItemID, attempt: Int, payload: [UInt8]) {
        fs.note(.sent(id: id, attempt: attempt, payload: payload, direct: false))
        fs.note(.settled)
    }

    /// Answers every request with `outcome` as it comes (and makes held syncs first), running the
    /// engine on `step` seconds at a time, until nothing is in flight or pending (at most `rounds` steps).
    public func drain(answering outcome: UploadOutcome = .status(201), step: Double = 30, rounds: Int = 40) throws {
        guard let engine else { throw RunError("no engine") }
        for _ in 0..<rounds {
            if let syncs, syncs.waiting > 0 {
                try releaseSyncs()
            } else if engine.transport.inFlight > 0 {
                try answer(outcome)
            } else if (try? FileManager.default.contentsOfDirectory(atPath: spoolPath + "/pending"))?.isEmpty ?? true,
                      engine.engine.commitsInFlight == 0 {
                return
            } else {
                try advance(by: step)
            }
        }
        throw RunError("not drained after \(rounds) rounds")
    }

    /// The end of a step: background removals and syncs are done, so what the step recorded is
    /// as durable as it will get. Not while a commit is in flight (its syncs held): what it
    /// recorded is durable only once it is done.
    public func settle() throws {
        try spool?.drainRemovals()
        if (engine?.engine.commitsInFlight ?? 0) == 0 { fs.note(.settled) }
    }

    /// Makes the next `count` held syncs (`startEngine(_:holdingSyncs:)`), one at a time, the
    /// engine stepping after each as its worker wakes it.
    public func releaseSyncs(count: Int = 1) throws {
        guard let syncs else { throw RunError("no syncs held") }
        for _ in 0..<count where syncs.waiting > 0 {
            syncs.release(1)
            try advance(by: 0)
        }
    }

    struct RunError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
