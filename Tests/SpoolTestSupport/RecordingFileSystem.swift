import Foundation
import Glibc
import SpoolSystem

/// A `FileSystem` that performs every call on the real `PosixFileSystem`, records it, and can make
/// the Nth call of one operation fail with a chosen errno (STYLE: "a recording/faulting double").
///
/// Descriptors are named in the log: a directory by the name it was opened with (`pending`), a
/// file by its name and the directory it was opened in. The log is safe to read from any thread.
public final class RecordingFileSystem: FileSystem, @unchecked Sendable {
    public enum Operation: String, Sendable, CaseIterable {
        case open, close, read, write, sync, syncFileSystem, rename, remove, makeDirectory, fstat, fstatat, list
        case setModificationTime, lock, unlock, truncate, seekToEnd, seek, writerCheck, allocate
        /// `fsetxattr` and `fgetxattr` (a direct upload's name attribute).
        case setAttribute, attribute
    }

    /// One recorded call.
    public struct Call: Equatable, Sendable, CustomStringConvertible {
        public var operation: Operation
        /// The file or directory acted on (`rename`: the source name).
        public var name: String
        /// The folder holding `name` (`rename`: the source folder); nil for the spool root itself.
        public var directory: String?
        /// `rename` only: the new name and its folder.
        public var toName: String?
        public var toDirectory: String?
        /// Whether the call is on a directory descriptor (a directory fsync, a directory open).
        public var isDirectory: Bool
        /// Set when the call was made to fail by injection.
        public var injectedErrno: Int32?
        /// `sync` and `syncFileSystem`: where spoold asked for it.
        public var site: SourceLocation?

        public var description: String {
            var s = "\(operation.rawValue) \(directory.map { "\($0)/" } ?? "")\(name)"
            if let toName { s += " -> \(toDirectory.map { "\($0)/" } ?? "")\(toName)" }
            if isDirectory { s += " (dir)" }
            if let injectedErrno { s += " [errno \(injectedErrno)]" }
            return s
        }
    }

    private struct Fault {
        var operation: Operation
        var nth: Int
        var code: Int32
        var matching: @Sendable (Call) -> Bool
        var seen = 0
    }

    private struct Opened {
        var name: String
        var directory: String?
        var isDirectory: Bool
    }

    private let real = PosixFileSystem()
    private let lock = NSLock()
    private var log: [Call] = []
    private var entries = 0
    private var faults: [Fault] = []
    private var holds: [(operation: Operation, gate: DispatchSemaphore, entered: DispatchSemaphore?, matching: @Sendable (Call) -> Bool)] = []
    private var opened: [Int32: Opened] = [:]
    private var holdsTimedOut = 0
    private var scriptedWriterCheck: WriterCheck?

    public init() {}

    /// Syncs are recorded but not made: for tests of many items whose subject is not durability
    /// (a shared disk's fsyncs would take most of their time).
    public var skipsSyncs: Bool {
        get { lock.withLock { skipSyncs } }
        set { lock.withLock { skipSyncs = newValue } }
    }
    private var skipSyncs = false

    /// Every call so far, in order.
    public var calls: [Call] { lock.withLock { log } }

    public func calls(_ operation: Operation) -> [Call] { calls.filter { $0.operation == operation } }

    public func resetLog() { lock.withLock { log.removeAll() } }

    /// Makes the `nth` (1-based) call of `operation` that satisfies `matching` fail with `errno`,
    /// counting from now; the real call is not made.
    public func failCall(
        _ operation: Operation, nth: Int = 1, errno code: Int32, where matching: @escaping @Sendable (Call) -> Bool = { _ in true }
    ) {
        precondition(nth >= 1, "nth is 1-based")
        lock.withLock { faults.append(Fault(operation: operation, nth: nth, code: code, matching: matching)) }
    }

    public func clearFaults() { lock.withLock { faults.removeAll() } }

    /// When set, every `writerCheck` gets this answer instead of the kernel's (still recorded):
    /// `.openForWriting` is a writer holding the file, without a process to hold it.
    public var writerCheckAnswer: WriterCheck? {
        get { lock.withLock { scriptedWriterCheck } }
        set { lock.withLock { scriptedWriterCheck = newValue } }
    }

    /// Makes every call of `operation` that satisfies `matching` wait until `gate` is signalled
    /// (once: it stays open), for at most 10 s; the call is recorded when it goes ahead. Shows
    /// which thread waits for what.
    /// `entered`, if given, is signalled as each held call starts to wait.
    public func hold(
        _ operation: Operation, until gate: DispatchSemaphore, entered: DispatchSemaphore? = nil,
        where matching: @escaping @Sendable (Call) -> Bool = { _ in true }
    ) {
        lock.withLock { holds.append((operation, gate, entered, matching)) }
    }

    /// Calls that `hold` let go after 10 s because their gate was never signalled.
    public var heldCallsTimedOut: Int { lock.withLock { holdsTimedOut } }

    // MARK: Naming descriptors

    private func describe(_ fd: FileDescriptor?) -> Opened {
        guard let fd else { return Opened(name: ".", directory: nil, isDirectory: true) }
        if fd.rawValue == AT_FDCWD { return Opened(name: ".", directory: nil, isDirectory: true) }
        return lock.withLock { opened[fd.rawValue] } ?? Opened(name: "fd \(fd.rawValue)", directory: nil, isDirectory: false)
    }

    /// The folder a descriptor names (`pending`, `<root>`), for the `directory` of a call made relative to it.
    private func folderName(_ fd: FileDescriptor?) -> String? {
        guard let fd, fd.rawValue != AT_FDCWD else { return nil }
        return describe(fd).name
    }

    private func callOn(_ operation: Operation, _ fd: FileDescriptor) -> Call {
        let d = describe(fd)
        return Call(operation: operation, name: d.name, directory: d.directory, isDirectory: d.isDirectory)
    }

    /// Records `call`, then either throws the injected error or runs `body`.
    private func perform<T>(_ call: Call, _ body: () throws -> T) throws -> T {
        var call = call
        for hold in lock.withLock({ holds }) where hold.operation == call.operation && hold.matching(call) {
            hold.entered?.signal()
            if hold.gate.wait(timeout: .now() + 10) == .success { hold.gate.signal() } else { lock.withLock { holdsTimedOut += 1 } }
        }
        let injected: Int32? = lock.withLock {
            for i in faults.indices where faults[i].operation == call.operation && faults[i].matching(call) {
                faults[i].seen += 1
                if faults[i].seen == faults[i].nth { return faults[i].code }
            }
            return nil
        }
        call.injectedErrno = injected
        lock.withLock { log.append(call) }
        if let injected {
            // Named as `PosixFileSystem` names them, so `SystemError.isSyncFailure` holds for both.
            let name = switch call.operation {
            case .sync: "fsync"
            case .syncFileSystem: "syncfs"
            default: call.operation.rawValue
            }
            throw SystemError(SystemCall(rawValue: name), path: call.name, errno: Errno(rawValue: injected))
        }
        return try body()
    }

    // MARK: FileSystem

    public func open(_ name: String, relativeTo directory: FileDescriptor?, flags: OpenFlags, mode: UInt32) throws
        -> FileDescriptor
    {
        let isDirectory = flags.contains(.directory)
        let folder = directory == nil ? nil : folderName(directory)
        let call = Call(operation: .open, name: name, directory: folder, isDirectory: isDirectory)
        let fd = try perform(call) { try real.open(name, relativeTo: directory, flags: flags, mode: mode) }
        // The spool root is opened by path; it is named `<root>` in the log.
        let recorded = directory == nil && isDirectory ? "<root>" : name
        lock.withLock { opened[fd.rawValue] = Opened(name: recorded, directory: folder, isDirectory: isDirectory) }
        return fd
    }

    public func close(_ fd: FileDescriptor) {
        let call = callOn(.close, fd)
        lock.withLock {
            log.append(call)
            opened[fd.rawValue] = nil
        }
        real.close(fd)
    }

    public func read(_ fd: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try perform(callOn(.read, fd)) { try real.read(fd, into: buffer) }
    }

    public func write(_ fd: FileDescriptor, from buffer: UnsafeRawBufferPointer) throws -> Int {
        try perform(callOn(.write, fd)) { try real.write(fd, from: buffer) }
    }

    public func sync(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws {
        var call = callOn(.sync, fd)
        call.site = site
        try perform(call) { if !skipsSyncs { try real.sync(fd, label: label, at: site) } }
    }

    public func syncFileSystem(_ fd: FileDescriptor, label: String, at site: SourceLocation) throws {
        var call = callOn(.syncFileSystem, fd)
        call.site = site
        try perform(call) { if !skipsSyncs { try real.syncFileSystem(fd, label: label, at: site) } }
    }

    public func rename(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor)
        throws
    {
        let call = Call(
            operation: .rename, name: from, directory: folderName(fromDirectory), toName: to,
            toDirectory: folderName(toDirectory), isDirectory: false)
        try perform(call) { try real.rename(from, in: fromDirectory, to: to, in: toDirectory) }
    }

    public func renameNoReplace(_ from: String, in fromDirectory: FileDescriptor, to: String, in toDirectory: FileDescriptor)
        throws
    {
        let call = Call(
            operation: .rename, name: from, directory: folderName(fromDirectory), toName: to,
            toDirectory: folderName(toDirectory), isDirectory: false)
        try perform(call) { try real.renameNoReplace(from, in: fromDirectory, to: to, in: toDirectory) }
    }

    public func setAttribute(_ name: String, _ value: [UInt8], of fd: FileDescriptor) throws {
        try perform(callOn(.setAttribute, fd)) { try real.setAttribute(name, value, of: fd) }
    }

    public func attribute(_ name: String, of fd: FileDescriptor, limit: Int) throws -> [UInt8]? {
        try perform(callOn(.attribute, fd)) { try real.attribute(name, of: fd, limit: limit) }
    }

    public func remove(_ name: String, in directory: FileDescriptor, isDirectory: Bool) throws {
        let call = Call(operation: .remove, name: name, directory: folderName(directory), isDirectory: isDirectory)
        try perform(call) { try real.remove(name, in: directory, isDirectory: isDirectory) }
    }

    public func makeDirectory(_ name: String, in directory: FileDescriptor?, mode: UInt32) throws {
        let call = Call(operation: .makeDirectory, name: name, directory: folderName(directory), isDirectory: true)
        try perform(call) { try real.makeDirectory(name, in: directory, mode: mode) }
    }

    public func status(of fd: FileDescriptor) throws -> FileStatus {
        try perform(callOn(.fstat, fd)) { try real.status(of: fd) }
    }

    public func status(of name: String, in directory: FileDescriptor) throws -> FileStatus {
        let call = Call(operation: .fstatat, name: name, directory: folderName(directory), isDirectory: false)
        return try perform(call) { try real.status(of: name, in: directory) }
    }

    public func list(_ directory: FileDescriptor) throws -> [DirectoryEntry] {
        try perform(callOn(.list, directory)) { try real.list(directory) }
    }

    /// Recorded as a `list`; the names are counted as they are read (`entriesRead`), so a test
    /// can see how much of a folder a caller had read when it did something.
    public func forEachEntry(
        _ directory: FileDescriptor, _ body: (UnsafeRawBufferPointer, FileStatus.FileType) throws -> Bool
    ) throws {
        try perform(callOn(.list, directory)) {
            try real.forEachEntry(directory) { name, type in
                lock.withLock { entries += 1 }
                return try body(name, type)
            }
        }
    }

    /// What the real file system says: a large folder on ext4 is listed in parts here too, as
    /// the daemon's and `status`'s listings are (`SplitListing`).
    public func listsInHashOrder(_ directory: FileDescriptor) -> Bool { real.listsInHashOrder(directory) }

    /// Recorded as a `list`, one for each part of a listing split by hash order; its names are
    /// counted as `forEachEntry` counts them.
    public func forEachEntry(
        _ directory: FileDescriptor, from position: Int64,
        _ body: (UnsafeRawBufferPointer, FileStatus.FileType, _ next: Int64) throws -> Bool
    ) throws {
        try perform(callOn(.list, directory)) {
            try real.forEachEntry(directory, from: position) { name, type, next in
                if !(name.count <= 2 && name.allSatisfy { $0 == UInt8(ascii: ".") }) { lock.withLock { entries += 1 } }
                return try body(name, type, next)
            }
        }
    }

    /// Names read so far by `forEachEntry`, in all folders.
    public var entriesRead: Int { lock.withLock { entries } }

    public func setModificationTime(_ fd: FileDescriptor, milliseconds: Int64) throws {
        try perform(callOn(.setModificationTime, fd)) { try real.setModificationTime(fd, milliseconds: milliseconds) }
    }

    public func lock(_ fd: FileDescriptor, exclusive: Bool, wait: Bool) throws -> Bool {
        try perform(callOn(.lock, fd)) { try real.lock(fd, exclusive: exclusive, wait: wait) }
    }

    public func unlock(_ fd: FileDescriptor) throws {
        try perform(callOn(.unlock, fd)) { try real.unlock(fd) }
    }

    public func truncate(_ fd: FileDescriptor, to length: Int64) throws {
        try perform(callOn(.truncate, fd)) { try real.truncate(fd, to: length) }
    }

    public func allocate(_ fd: FileDescriptor, length: Int64) throws {
        try perform(callOn(.allocate, fd)) { try real.allocate(fd, length: length) }
    }

    public func seekToEnd(_ fd: FileDescriptor) throws -> Int64 {
        try perform(callOn(.seekToEnd, fd)) { try real.seekToEnd(fd) }
    }

    public func seek(_ fd: FileDescriptor, to offset: Int64) throws {
        try perform(callOn(.seek, fd)) { try real.seek(fd, to: offset) }
    }

    /// An injected errno here is the kernel refusing the lease (`.unknown(errno:)`), not a throw:
    /// that is how a file owned by another user without CAP_LEASE looks.
    public func writerCheck(_ name: String, in directory: FileDescriptor) throws -> WriterCheck {
        let call = Call(operation: .writerCheck, name: name, directory: folderName(directory), isDirectory: false)
        do {
            return try perform(call) { try writerCheckAnswer ?? real.writerCheck(name, in: directory) }
        } catch let error as SystemError where error.call.rawValue == Operation.writerCheck.rawValue {
            return .unknown(errno: error.errno)  // injected (a real failure names `open`)
        }
    }
}
