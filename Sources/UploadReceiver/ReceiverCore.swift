import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The running part of an `UploadReceiver`: the listening socket, the accept thread, the set of
/// open connections and the request log, all guarded by one condition variable.
///
/// Threads hold this object, not the `UploadReceiver`, so that a receiver nobody references any
/// more is deinitialised and stops its threads.
///
/// Socket ownership: the accept thread owns the listening socket and each connection thread
/// owns its socket; both close them under the lock after deregistering, and `stop` only calls
/// `shutdown` (under the same lock) on sockets still registered. So `stop` never touches a
/// descriptor number that was closed and reused.
final class ReceiverCore: @unchecked Sendable {
    static let maximumConnections = 256
    static let maximumHeadBytes = 64 * 1024
    /// How long `stop` waits for threads to exit; they normally exit at once.
    static let stopJoinTimeout: Double = 10

    let storeDirectory: String?
    let keepsBodiesInMemory: Bool

    private enum Phase { case idle, running, stopped }

    private let condition = NSCondition()
    // Everything below is guarded by `condition`.
    private var phase = Phase.idle
    private var script: ResponseScript
    private var observer: (@Sendable (ReceivedRequest) -> Void)?
    private var records: [ReceivedRequest] = []
    private var handledCount = 0
    private var listenFD: Int32 = -1
    private var boundPort: UInt16 = 0
    private var openConnections: Set<Int32> = []
    private var acceptedCount = 0
    private var liveThreads = 0

    init(script: ResponseScript, storeDirectory: String?, keepsBodiesInMemory: Bool) {
        self.script = script
        self.storeDirectory = storeDirectory
        self.keepsBodiesInMemory = keepsBodiesInMemory
    }

    // MARK: - Facade operations

    func start(port: UInt16) throws -> UInt16 {
        condition.lock()
        defer { condition.unlock() }
        guard phase == .idle else { throw ReceiverError.alreadyStarted }
        if let storeDirectory {
            do {
                try FileManager.default.createDirectory(atPath: storeDirectory, withIntermediateDirectories: true)
            } catch {
                throw ReceiverError.storeDirectory(path: storeDirectory, reason: "\(error)")
            }
        }
        let (fd, actualPort) = try LoopbackSocket.open(port: port, listening: 512, reuseAddress: true)
        listenFD = fd
        boundPort = actualPort
        phase = .running
        liveThreads += 1
        let thread = Thread { [self] in
            acceptLoop(listenFD: fd)
            threadEnded()
        }
        thread.name = "UploadReceiver.accept"
        thread.start()
        return boundPort
    }

    var port: UInt16 { locked { boundPort } }

    var isStopping: Bool { locked { phase == .stopped } }

    func setScript(_ newScript: ResponseScript) { locked { script = newScript } }

    func setObserver(_ newObserver: @escaping @Sendable (ReceivedRequest) -> Void) {
        locked { observer = newObserver }
    }

    var requests: [ReceivedRequest] { locked { records } }

    var handledRequestCount: Int { locked { handledCount } }

    func waitForRequests(count: Int, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: max(0, timeout))
        condition.lock()
        defer { condition.unlock() }
        while handledCount < count {
            if !condition.wait(until: deadline) { break }
        }
        return handledCount >= count
    }

    func stop() {
        condition.lock()
        defer { condition.unlock() }
        phase = .stopped
        if listenFD >= 0 { shutdown(listenFD, Int32(SHUT_RDWR)) }
        for fd in openConnections { shutdown(fd, Int32(SHUT_RDWR)) }
        condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: ReceiverCore.stopJoinTimeout)
        while liveThreads > 0 {
            if !condition.wait(until: deadline) { break }
        }
    }

    // MARK: - Used by connections

    /// Logs a request whose head was just parsed: gives it the next index and returns the
    /// head-only record with the script in force.
    func beginRequest(_ head: RequestHead, connectionIndex: Int) -> (ReceivedRequest, ResponseScript) {
        locked {
            let record = ReceivedRequest(
                index: records.count, connectionIndex: connectionIndex, method: head.method, target: head.target,
                headers: head.headers, receivedAt: Date().timeIntervalSince1970)
            records.append(record)
            return (record, script)
        }
    }

    /// Replaces the logged record with the same index.
    func update(_ record: ReceivedRequest) {
        locked { records[record.index] = record }
    }

    /// Stores the final record, tells the observer (outside the lock), then counts the request
    /// as handled and wakes waiters; so a waiter that returns knows the observer has run.
    func markHandled(_ record: ReceivedRequest) {
        let observer: (@Sendable (ReceivedRequest) -> Void)? = locked {
            records[record.index] = record
            return self.observer
        }
        observer?(record)
        locked {
            handledCount += 1
            condition.broadcast()
        }
    }

    /// The path a body for `record` is stored at, or nil without a store directory.
    func storePath(for record: ReceivedRequest) -> String? {
        guard let storeDirectory else { return nil }
        let directory = storeDirectory.hasSuffix("/") ? storeDirectory : storeDirectory + "/"
        return directory + StoredFileName.make(index: record.index, target: record.target)
    }

    // MARK: - Threads

    private func acceptLoop(listenFD: Int32) {
        while true {
            // accept4 is not visible from Swift's Glibc module; set close-on-exec right after.
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                let code = errno
                if isStopping { break }
                if [EINTR, ECONNABORTED, EPROTO].contains(code) { continue }
                if [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(code) {
                    usleep(10_000)  // out of descriptors or memory: back off instead of spinning
                    continue
                }
                break  // the listening socket is unusable
            }
            let connectionIndex: Int? = locked {
                guard phase == .running, openConnections.count < ReceiverCore.maximumConnections else { return nil }
                openConnections.insert(fd)
                acceptedCount += 1
                liveThreads += 1
                return acceptedCount - 1
            }
            guard let connectionIndex else {
                close(fd)
                continue
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var noDelay: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            let thread = Thread { [self] in
                ReceiverConnection(core: self, fd: fd, index: connectionIndex).run()
                connectionEnded(fd)
            }
            thread.name = "UploadReceiver.connection.\(connectionIndex)"
            thread.start()
        }
        locked {
            close(self.listenFD)
            self.listenFD = -1
        }
    }

    private func connectionEnded(_ fd: Int32) {
        locked {
            openConnections.remove(fd)
            close(fd)
            liveThreads -= 1
            condition.broadcast()
        }
    }

    private func threadEnded() {
        locked {
            liveThreads -= 1
            condition.broadcast()
        }
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }
}
