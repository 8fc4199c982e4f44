import SpoolCore
import SpoolStore
import SpoolSystem

extension Engine {
    /// Most files taken in one round, so uploads keep flowing while a big drop is ingested.
    static let ingestBatchLimit = 1024
    /// Most subfolders of incoming/ one batch takes files from (each is held open until the
    /// batch is durable): 256, or a quarter of the descriptor limit if that is lower (spoold
    /// raises the limit at start, `OpenFileLimit`, but a hard limit may be low).
    static let ingestFolderLimit: Int = {
        guard let limit = OpenFileLimit.current else { return 64 }
        return Int(max(8, min(256, limit / 4)))
    }()

    /// Reads inotify: arrivals in incoming/ and its subfolders are taken at once; new subfolders
    /// are watched and scanned; a json moved into pending/ by an operator (`mv failed/* pending/`,
    /// `spoold retry`) is adopted.
    func takeWatcherEvents(_ arrived: [InotifyWatcher.Event], now: Timestamp) throws {
        var rescan = false
        for event in arrived {
            if event.overflowed { rescan = true; continue }
            if let folder = incomingFolders[event.watch] {
                takeIncomingEvent(event, in: folder, now: now)
            } else if event.watch == pendingWatch, let name = ItemFileName(parsing: event.name), name.kind == .json,
                      items[name.id] == nil, !ownArrivals.contains(name.id)
            {
                adopt(name, now: now)
            } else if event.watch == rootWatch && event.name == SpoolFolder.incoming.rawValue {
                incomingMayBeReplaced = true
            }
        }
        // Our own renames into pending/ were announced in these events at the latest.
        ownArrivals.removeAll(keepingCapacity: true)
        if incomingMayBeReplaced {
            incomingMayBeReplaced = false
            try watchIncomingAgainIfReplaced(now: now)
        }
        if rescan || now >= nextRescan {
            if rescan { log.warning("inotify queue overflowed; rescanning incoming/ and pending/") }
            try watchIncomingAgainIfReplaced(now: now)
            try scanIncoming(now: now)
            try scanPending(now: now)
            nextRescan = now.adding(seconds: configuration.rescanSeconds)
        }
        if let check = nextSettleCheck, check <= now { recheckSettling(now: now) }
    }

    /// incoming/ was replaced (removed and made again, or another folder moved in; noticed by
    /// its watch, the spool root's, or the rescan comparing inodes): the new one is opened,
    /// watched and scanned, and what was known of the old one is forgotten.
    func watchIncomingAgainIfReplaced(now: Timestamp) throws {
        guard try spool.reopenIncomingIfReplaced() else { return }
        log.warning("incoming/ was replaced (removed and made again, or another folder moved in); watching the new one")
        for wd in incomingFolders.keys { events.unwatch(wd) }
        incomingFolders.removeAll()
        incomingAnnounced.removeAll()
        incomingSettling.removeAll()
        incomingLooks.removeAll()
        reportedNames.removeAll()
        refusedLooks.removeAll()
        incomingWatch = try events.watch(spool.descriptor(.incoming), label: "\(spool.path)/incoming", mask: InotifyWatcher.incomingFolder)
        incomingFolders[incomingWatch] = ""
        try scanIncoming(now: now)
    }

    private func takeIncomingEvent(_ event: InotifyWatcher.Event, in folder: String, now: Timestamp) {
        if event.watch == incomingWatch && (event.has(InotifyWatcher.folderGone) || event.has(InotifyWatcher.watchRemoved)) {
            incomingMayBeReplaced = true
        }
        if event.has(InotifyWatcher.watchRemoved) {
            incomingFolders[event.watch] = nil
            return
        }
        if event.name.isEmpty { return }  // about the folder itself (removed or renamed): its IN_IGNORED follows
        let path = folder.isEmpty ? event.name : folder + "/" + event.name
        guard !Spool.isWorkInProgress(path) else { return }
        if event.has(InotifyWatcher.movedFrom) {
            if event.isFolder { forgetFolder(path) } else { forgetFile(path) }
        } else if event.isFolder {
            // A new subfolder: made in place (its files may still be written: settle rules), or
            // renamed in whole (complete by the Maildir rule, like a file renamed in).
            enterFolder(path, renamedIn: event.has(InotifyWatcher.movedTo), now: now)
        } else if event.name.hasSuffix(SpoolFolder.sidecarSuffix) || event.has(InotifyWatcher.created) {
            return  // sidecars travel with their file; a created file is announced by its close
        } else if event.has(InotifyWatcher.closeWrite) {
            forgetReport(path)  // a new file under a name reported before is judged afresh
            take(path)  // each close of a writer is a complete file
        } else {
            forgetReport(path)
            considerRenamedIn(path, now: now)
        }
    }

    /// When the earliest settling file is to be looked at again.
    var nextSettleCheck: Timestamp? { incomingSettling.values.min() }

    /// A held file is looked at again this often (close-write announces it sooner).
    var heldFileRecheckSeconds: Double { max(configuration.settleSeconds, 1) }

    /// Walks incoming/ and its subfolders, watching each folder before listing it, and judges
    /// every file found (`considerScanned`).
    func scanIncoming(now: Timestamp) throws {
        var present = Set<String>()
        try spool.walkIncoming(
            entering: { path, fd in watchFolder(path, fd) },
            skipped: { path, error in
                present.insert(path)  // still there: reported once, not at every rescan
                skippedFolder(path, error)
            },
            visit: { folder, fd, entries in considerEntries(entries, in: folder, fd, renamedIn: false, present: &present, now: now) })
        reportedNames.formIntersection(present)
        refusedLooks = refusedLooks.filter { present.contains($0.key) }
        incomingLooks = incomingLooks.filter { present.contains($0.key) }
        incomingSettling = incomingSettling.filter { present.contains($0.key) }
    }

    /// A subfolder that appeared: watched first, then scanned, so nothing made in it is missed.
    func enterFolder(_ path: String, renamedIn: Bool, now: Timestamp) {
        var present = Set<String>()
        try? spool.walkIncoming(
            from: path,
            entering: { path, fd in watchFolder(path, fd) },
            skipped: { path, error in skippedFolder(path, error) },
            visit: { folder, fd, entries in considerEntries(entries, in: folder, fd, renamedIn: renamedIn, present: &present, now: now) })
    }

    private func considerEntries(
        _ entries: [DirectoryEntry], in folder: String, _ fd: FileDescriptor, renamedIn: Bool, present: inout Set<String>,
        now: Timestamp
    ) {
        // In name order: files are taken in the order they were announced.
        for entry in entries.sorted(by: { $0.name < $1.name })
        where !entry.name.hasPrefix(".") && !entry.name.hasSuffix(SpoolFolder.sidecarSuffix) {
            let path = folder.isEmpty ? entry.name : folder + "/" + entry.name
            if entry.type == .directory { continue }  // walked
            present.insert(path)
            guard entry.type == .regular || entry.type == .unknown else {
                reportOnce(path, "incoming/\(path) is not a regular file (\(entry.type)); left alone")
                continue
            }
            let file = IncomingFile(path: path, folder: fd, name: entry.name)
            if renamedIn { considerRenamedIn(file, now: now) } else { considerScanned(file, now: now) }
        }
    }

    /// Watches a folder of incoming/ (watching it again, at a rescan, returns the same watch and
    /// refreshes its path). Past `--max-watches` watches, or when the kernel's limit on watches is
    /// reached, says so once: files in folders not watched are still found by the periodic rescan.
    private func watchFolder(_ path: String, _ fd: FileDescriptor) {
        do {
            let wd = try events.watch(fd, label: "\(spool.path)/incoming/\(path)", mask: InotifyWatcher.incomingFolder)
            if incomingFolders[wd] == nil && incomingFolders.count >= configuration.maximumWatches {
                // A new watch past the cap (one already held came back as itself): given back.
                events.unwatch(wd)
                if !reportedWatchCap {
                    reportedWatchCap = true
                    log.warning("""
                        incoming/ has more folders than --max-watches \(configuration.maximumWatches): incoming/\(path) and \
                        any others past it are not watched; files in them are found by the rescan every \
                        \(formatSeconds(configuration.rescanSeconds)) (raise --max-watches, or remove old folders)
                        """)
                }
                return
            }
            incomingFolders[wd] = path
        } catch let error as SystemError {
            guard !reportedWatchLimit else { return }
            reportedWatchLimit = true
            let hint = error.isOutOfSpace ? " (raise fs.inotify.max_user_watches)" : ""
            log.warning("""
                cannot watch incoming/\(path): \(error)\(hint); files in folders that are not watched are found by \
                the rescan every \(formatSeconds(configuration.rescanSeconds))
                """)
        } catch {}
    }

    private func skippedFolder(_ path: String, _ error: SystemError) {
        guard !error.isNotFound else { return }  // removed meanwhile: a lost race
        reportOnce(path, "incoming/\(path) is not a folder spoold can enter (\(error)); left alone")
    }

    /// A subfolder renamed away: its watches (and those below it) are dropped, its files forgotten.
    private func forgetFolder(_ path: String) {
        let prefix = path + "/"
        for (wd, folder) in incomingFolders where folder == path || folder.hasPrefix(prefix) {
            events.unwatch(wd)
            incomingFolders[wd] = nil
        }
        incomingAnnounced = incomingAnnounced.filter { !$0.hasPrefix(prefix) }
        reportedNames = reportedNames.filter { !$0.hasPrefix(prefix) }
        refusedLooks = refusedLooks.filter { !$0.key.hasPrefix(prefix) }
        incomingSettling = incomingSettling.filter { !$0.key.hasPrefix(prefix) }
        incomingLooks = incomingLooks.filter { !$0.key.hasPrefix(prefix) }
    }

    private func forgetFile(_ path: String) {
        forgetReport(path)
        incomingAnnounced.remove(path)
        incomingSettling[path] = nil
        incomingLooks[path] = nil
    }

    /// Looks again at the settling files whose time has come, without listing any folder.
    func recheckSettling(now: Timestamp) {
        for (path, at) in incomingSettling where at <= now { considerScanned(IncomingFile(path: path), now: now) }
    }

    /// A file found by a scan, not announced by inotify: its writer may still be writing it in
    /// place. It is taken as soon as no process holds it open for writing (asked with a read
    /// lease), whatever its age: a file every writer has closed is complete, as one announced by
    /// its writer's close is. Where the lease cannot be taken (another user's file without
    /// CAP_LEASE, a file system without leases), the fallback rule: its mtime is `--settle` old
    /// and its size and mtime stay the same across two looks `--settle` apart.
    func considerScanned(_ file: IncomingFile, now: Timestamp) {
        let name = file.path
        incomingSettling[name] = nil
        guard let status = try? file.status(spool) else {
            incomingLooks[name] = nil
            return  // vanished: a lost race
        }
        guard status.type == .regular else {
            reportOnce(name, "incoming/\(name) is not a regular file (\(status.type)); left alone")
            return
        }
        // A file that could not be taken (unreadable) is tried again once its owner, mode, size,
        // mtime or inode changed: the operator fixed it, or a new file took its name.
        if let refused = refusedLooks[name], refused != RefusedLook(status) {
            refusedLooks[name] = nil
            reportedNames.remove(name)
        }
        switch askWriters(file) {
        case .noWriter:
            take(name)
        case .openForWriting:
            log.debug("incoming/\(name) is still open for writing; waiting for its writer to close it")
            incomingSettling[name] = now.adding(seconds: heldFileRecheckSeconds)
        case .unknown:
            let settledAt = Timestamp(millisecondsSinceEpoch: status.modifiedMilliseconds).adding(seconds: configuration.settleSeconds)
            guard settledAt <= now else {
                incomingSettling[name] = settledAt
                return
            }
            let look = IncomingLook(size: status.size, modifiedMilliseconds: status.modifiedMilliseconds, since: now)
            var previous = incomingLooks[name]
            if previous.map({ $0.size != look.size || $0.modifiedMilliseconds != look.modifiedMilliseconds }) ?? true {
                previous = look
                incomingLooks[name] = look
            }
            let stableSince = previous?.since ?? now
            let stableUntil = stableSince.adding(seconds: configuration.settleSeconds)
            if configuration.settleSeconds == 0 || (stableSince < now && stableUntil <= now) {
                take(name)
            } else {
                incomingSettling[name] = stableUntil
            }
        case nil:
            take(name)  // could not be opened: ingest reports why, or it vanished
        }
    }

    /// A file renamed into incoming/: complete by the Maildir rule, unless a process still holds
    /// it open for writing (a writer may rename first and write after).
    func considerRenamedIn(_ path: String, now: Timestamp) { considerRenamedIn(IncomingFile(path: path), now: now) }

    func considerRenamedIn(_ file: IncomingFile, now: Timestamp) {
        if askWriters(file) == .openForWriting {
            log.debug("incoming/\(file.path) was renamed in but is still open for writing; waiting for its writer")
            incomingSettling[file.path] = now.adding(seconds: heldFileRecheckSeconds)
        } else {
            take(file.path)
        }
    }

    private func take(_ name: String) {
        if incomingAnnounced.insert(name).inserted { announcedOrder.append(name) }
        incomingSettling[name] = nil
        incomingLooks[name] = nil
    }

    /// The next `limit` announced names, oldest first, sorted among themselves; they leave
    /// `incomingAnnounced`.
    func takeAnnounced(_ limit: Int) -> [String] {
        var names: [String] = []
        while names.count < limit, announcedHead < announcedOrder.count {
            let name = announcedOrder[announcedHead]
            announcedHead += 1
            if incomingAnnounced.remove(name) != nil { names.append(name) }
        }
        if announcedHead == announcedOrder.count {
            announcedOrder.removeAll(keepingCapacity: announcedOrder.count < 65_536)
            announcedHead = 0
        } else if announcedHead >= 4096 && 2 * announcedHead >= announcedOrder.count {
            announcedOrder.removeFirst(announcedHead)
            announcedHead = 0
        }
        return names.sorted()
    }

    /// Puts names taken by `takeAnnounced` back, first in line (a full spool held them).
    func putBackAnnounced(_ names: ArraySlice<String>) {
        let back = names.filter { incomingAnnounced.insert($0).inserted }
        announcedOrder.replaceSubrange(announcedHead..<announcedHead, with: back)
    }

    /// Asks the kernel whether a writer holds the file (nil: it could not be opened). The first
    /// time the lease is refused, says once in the log which rule applies instead.
    private func askWriters(_ file: IncomingFile) -> WriterCheck? {
        guard let answer = try? file.writerCheck(spool) else { return nil }
        if case .unknown(let code) = answer, !reportedLeaseFallback {
            reportedLeaseFallback = true
            log.warning("""
                cannot ask whether files in incoming/ are still open for writing (read lease refused: \
                \(code); spoold needs to own them or hold CAP_LEASE): a file found \
                by a scan is taken once its size and mtime stay unchanged for --settle seconds
                """)
        }
        return answer
    }

    /// Adopts json files in pending/ the engine does not know (operator moves, another process).
    /// Only while nothing waits beyond memory: then every item in pending/ should be in memory,
    /// and the folder holds no more than memory does. Otherwise the passes over pending/ find them.
    func scanPending(now: Timestamp) throws {
        guard backlog.isEmpty else { return }
        for entry in try spool.list(.pending) {
            if let name = ItemFileName(parsing: entry.name), name.kind == .json, items[name.id] == nil { adopt(name, now: now) }
        }
    }

    func adopt(_ name: ItemFileName, now: Timestamp) {
        let location = ItemLocation(.pending, attempt: name.attempt)
        guard let status = try? spool.status(of: name, at: location), status.type == .regular else { return }
        // Untried: in line by the time in its id (a retried item keeps its place); tried: at its
        // json's mtime, or at once if that is in the future (an operator's move means "now").
        let notBefore = name.attempt == 0
            ? BacklogEntry.untried(name.id).notBefore : min(Timestamp(millisecondsSinceEpoch: status.modifiedMilliseconds), now)
        admit(name.id, ItemLifecycle(location: location, notBefore: notBefore))
        observers.itemQueued(name.id, at: location)
        log.debug("adopted \(name.id) from pending/")
    }

    /// Turns announced files into items, in one durable batch.
    func ingest(now: Timestamp) throws {
        guard try intakeMayRun(now: now), !incomingAnnounced.isEmpty else { return }
        var batch: [NewItem] = []
        var sidecars: [String: String] = [:]
        // Sent directly when they can be, one per free slot (the rest wait announced); those
        // that cannot are taken in below, admitted by the size gate already.
        let direct = directUploadsMayRun(now: now)
        let names = direct ? try startDirectUploads(now: now) : takeAnnounced(intakeBatchLimit(now: now))
        var folders = Set<Substring>()
        for (n, name) in names.enumerated() {
            // Each subfolder a batch takes files from stays open until the batch is durable:
            // files from more folders than `ingestFolderLimit` wait for the next batch.
            if let slash = name.lastIndex(of: "/"), folders.insert(name[..<slash]).inserted, folders.count > Engine.ingestFolderLimit {
                putBackAnnounced(names[n...])
                break
            }
            // Full (--max-spool-size): this and later files wait, announced, in incoming/.
            if !direct, let sizeGate, try !sizeGate.admits(name, engine: self, now: now) {
                putBackAnnounced(names[n...])
                break
            }
            incomingSettling[name] = nil
            if reportedNames.contains(name) { continue }
            // The path below incoming/ is the original name; the id's hint and the guessed type
            // come from its last component.
            let leaf = FileName.display(IncomingFile(path: name).name)
            let id = idGenerator.next(at: now, originalName: leaf)
            var metadata = ItemMetadata(
                id: id, originalName: name, size: 0, contentType: ContentType.guess(forFileName: leaf), createdAt: now)
            metadata.setOriginalName(name)  // a name that is not UTF-8 keeps its bytes
            var state = ItemState.pending
            let sidecarName = name + SpoolFolder.sidecarSuffix
            do {
                if let sidecar = try readSidecar(of: name) {
                    sidecars[id.rawValue] = sidecar.name
                    try apply(sidecar, of: name, to: &metadata)
                }
            } catch {
                state = .failed
                metadata.setFailure(FailureReason(.sidecar, "sidecar incoming/\(sidecarName): \(error)"))
            }
            batch.append(NewItem(source: .incoming(name), metadata: metadata, state: state))
        }
        guard !batch.isEmpty else { return }
        let results: [AddResult]
        do {
            results = try spool.add(batch)
        } catch SpoolError.outOfSpace(_, let cause) {
            // Nothing was kept: the files stay in incoming/, announced, for the next try. A file
            // tried alone (intake is paused) goes to the back of the line, so one that does not
            // fit (a copy larger than the free space) does not hold up those that would.
            let names = batch.compactMap { if case .incoming(let name) = $0.source { name } else { nil } }
            if names.count == 1, incomingAnnounced.insert(names[0]).inserted {
                announcedOrder.append(names[0])
            } else {
                putBackAnnounced(names[...])
            }
            intakeFoundNoRoom(now: now, cause: "\(cause)")
            return
        }
        intakeFoundRoom(now: now)
        for (item, result) in zip(batch, results) {
            let name: String = if case .incoming(let n) = item.source { n } else { "?" }
            switch result {
            case .added(let id):
                summary.ingested += 1
                if let sidecar = sidecars[id.rawValue] { try? spool.removeIncomingFile(sidecar) }
                if item.state == .failed {
                    summary.failed += 1
                    log.warning("incoming/\(name) parked in failed/ as \(id): \(item.metadata.failureReason ?? "")")
                } else {
                    if !admit(id, ItemLifecycle(location: ItemLocation(.pending, attempt: 0), notBefore: now)) {
                        ownArrivals.insert(id)  // its rename into pending/ is not an operator's to adopt
                    }
                    observers.itemQueued(id, at: ItemLocation(.pending, attempt: 0))
                    log.debug("took incoming/\(name) as \(id)")
                }
            case .rejected(let reason):
                // Remembered (not taken again, not said again) only while the file is there: a
                // file its producer took back is gone, and a new one under its name is new.
                if let status = try? spool.incomingStatus(name) {
                    reportOnce(name, reason)
                    if status.type == .regular { refusedLooks[name] = RefusedLook(status) }
                } else {
                    log.warning(reason)
                }
            }
        }
    }

    private func forgetReport(_ name: String) {
        reportedNames.remove(name)
        refusedLooks[name] = nil
    }

    func reportOnce(_ name: String, _ message: String) {
        guard reportedNames.insert(name).inserted else { return }
        log.warning(message)
    }
}
