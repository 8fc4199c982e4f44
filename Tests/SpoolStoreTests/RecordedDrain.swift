import Dispatch
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTestSupport
import SpoolTransport

/// The real engine draining `count` files dropped in incoming/, through a recording file system
/// and a transport that gives every upload the same answer: the store's view of a whole drain.
struct RecordedDrain {
    /// Answers every upload with one outcome, on another thread, as URLSession would.
    final class AnsweringTransport: UploadTransport, @unchecked Sendable {
        private let outcome: UploadOutcome
        private let queue = DispatchQueue(label: "answering-transport", attributes: .concurrent)
        init(_ outcome: UploadOutcome) { self.outcome = outcome }
        func start(_ request: UploadRequest, completion: @escaping @Sendable (UploadOutcome) -> Void) {
            queue.async { [outcome] in completion(outcome) }
        }
        func cancelAll() {}
    }

    let summary: RunSummary
    /// Every file-system call of the drain (not of the set-up).
    let calls: [RecordingFileSystem.Call]
    /// What is left in pending/, inflight/ and tmp/.
    let leftovers: [String]

    /// - Parameter direct: send files straight from incoming/ (the daemon's default); off, each
    ///   is an item first, the queue these tests are about.
    init(count: Int, answer: UploadOutcome, policy: RetryPolicy = RetryPolicy(), direct: Bool = false) throws {
        let temp = try TemporarySpool()
        defer { temp.cleanUp() }
        _ = try temp.open()
        for i in 0..<count { try temp.write(Array("item \(i)".utf8), to: "file-\(i).txt", in: .incoming) }
        let fs = RecordingFileSystem()
        let spool = try temp.open(fs: fs)
        var configuration = EngineConfiguration(
            url: URLTemplate("http://127.0.0.1:9/"), policy: policy, settleSeconds: 0, exitWhenIdle: true)
        configuration.directUploads = direct
        let engine = try Engine(
            spool: spool, transport: AnsweringTransport(answer), clock: SystemClock(), configuration: configuration,
            log: EventLog(minimumLevel: .error, clock: { SystemClock().now() }), processTag: 7)
        fs.resetLog()
        summary = try engine.run()
        calls = fs.calls
        leftovers = temp.names(in: .pending) + temp.names(in: .inflight) + temp.names(in: .tmp)
    }
}
