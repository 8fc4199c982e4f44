// spoold-bench: the baselines and probes of scripts/bench. Not part of spoold.
//
//   spoold-bench upload --url U [--concurrency N] [--method PUT|POST] [--via-transport] [--s3-sign] PATH...
//       A bare upload loop with no durability: one URLSession, `uploadTask(fromFile:)`, N at once,
//       configured like spoold's transport. The ceiling of our transport. PATHs may be folders.
//       --via-transport sends through spoold's own URLSessionTransport instead (deadline timers,
//       locks and outcome mapping included), to price the wrapper.
//       --s3-sign signs each request with SigV4 (credentials from AWS_ACCESS_KEY_ID and
//       AWS_SECRET_ACCESS_KEY, region AWS_REGION or us-east-1; payload UNSIGNED-PAYLOAD): the
//       bare loop as an S3 client, for a store that checks signatures (URL path-style).
//   spoold-bench await-request --log FILE --offset BYTES [--timeout S] [--rename FROM TO]
//       Waits for the first line appended to an nginx access log (format `$msec $request_time ...`)
//       after BYTES and prints when that request started (epoch seconds, $msec - $request_time).
//       With --rename it first renames FROM to TO and also prints the time of the rename.
//   spoold-bench await-requests --log FILE --offset BYTES --count N [--pid PID] [--timeout S]
//       Waits until N lines follow BYTES in the access log, reading only what was appended since
//       its last look (every 50 ms), so a benchmark's wait costs the machine next to nothing
//       (a shell loop of `tail | wc -l` every 0.1 s took 2-3 % of a core from the daemon it
//       measured). Prints the lines seen; exits 3 if PID ends first.
//   spoold-bench drop --dir INCOMING --log FILE --offset BYTES --count N [--from DIR] [--timeout S]
//       The end-to-end path: copies DIR's files into INCOMING as `.NAME` (untimed; the Maildir
//       way), then renames every dot-file `.NAME` in INCOMING to `NAME`, as fast as it can, then waits until N requests follow BYTES
//       in the nginx access log. Prints `seconds=` from the first rename to the end of the Nth
//       request ($msec), and how long the renames took.
//   spoold-bench feed --dir INCOMING --log FILE --offset BYTES --count N --pid PID
//                     [--size B] [--backlog K] [--sample-at M] [--checkpoints C,C...] [--trace FILE]
//       A long run: writes N files of B bytes into INCOMING the Maildir way (dot-name, then
//       rename), never more than K ahead of the requests logged, and samples the VmRSS of PID
//       every 0.5 s. Prints RSS at M uploads, at each checkpoint (`rss_at_C_kib=`), at the end,
//       and the range seen after M; --trace writes every sample (`uploads rss_kib`) to FILE.
//   spoold-bench codec [--records N]
//       Times the pure per-item work spoold does: index record encode/decode, item file-name
//       parsing, and the Foundation JSON coding of an item's metadata.
//   spoold-bench sha256 [--mib N]
//       SHA-256 throughput of SpoolCore's own implementation over an N MiB buffer (default 256),
//       fed in 1 MiB pieces as `--content-digest` does. Build with -c release to measure.
//   spoold-bench backlog-pass [--chunk N] [--parts N] [--census] SPOOL
//       Times a start's first listing of pending/ and one pass over it as the daemon makes it for the queue beyond memory.
//   spoold-bench fill --count N [--size B] [--attempt A] [--state pending|failed|done] [--start-ms T] SPOOL
//       Writes N items (B-byte blobs, default 16, and their jsons) straight into a state folder,
//       unsynced: a backlog of a million in a minute or two, where `spoold enqueue` takes far longer.
//   spoold-bench first-line COMMAND [ARGS...]
//       Runs COMMAND (an absolute path), times its first line of output and all of it, counts
//       the lines, and prints its peak RSS (wait4's ru_maxrss): `spoold ls` at any size.
import SpoolSystem
import Foundation
import Glibc
import SpoolCore
import SpoolStore
import SpoolTransport
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: Arguments

struct Arguments {
    var options: [String: String] = [:]
    var flags = Set<String>()
    var positionals: [String] = []

    init(_ raw: ArraySlice<String>, flags known: Set<String>) {
        var rest = raw[...]
        while let word = rest.popFirst() {
            if word.hasPrefix("--") {
                if known.contains(word) { flags.insert(word) }
                else if let value = rest.popFirst() { options[word] = value }
                else { fail("\(word) needs a value") }
            } else {
                positionals.append(word)
            }
        }
    }

    func int(_ name: String, _ fallback: Int) -> Int {
        guard let text = options[name] else { return fallback }
        guard let value = Int(text) else { fail("\(name) wants a number, not '\(text)'") }
        return value
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("spoold-bench: \(message)\n".utf8))
    exit(2)
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Regular files named by `paths`, folders expanded one level (dot-names skipped), sorted.
func expandFiles(_ paths: [String]) -> [String] {
    var files: [String] = []
    for path in paths {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { fail("no such file: \(path)") }
        if isDirectory.boolValue {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            files += names.filter { !$0.hasPrefix(".") }.sorted().map { "\(path)/\($0)" }
        } else {
            files.append(path)
        }
    }
    return files.map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
}

// MARK: upload

/// Counts finished uploads; the main thread waits on `slots` to keep N in flight.
final class UploadLoop: @unchecked Sendable {
    let slots: DispatchSemaphore
    let done = DispatchGroup()
    let ok = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let firstError = Mutex<String?>(nil)
    let bytes = Atomic<Int>(0)
    /// What URLSession says it sent (countOfBytesSent): proof that bodies went out whole.
    let sent = Atomic<Int>(0)

    init(concurrency: Int) { slots = DispatchSemaphore(value: concurrency) }

    func finished(success: Bool, size: Int, sent: Int64? = nil, error: @autoclosure () -> String) {
        self.sent.add(Int(sent ?? Int64(size)), ordering: .relaxed)
        if success {
            ok.add(1, ordering: .relaxed)
            bytes.add(size, ordering: .relaxed)
        } else {
            failed.add(1, ordering: .relaxed)
            let text = error()
            firstError.withLock { if $0 == nil { $0 = text } }
        }
        slots.signal()
        done.leave()
    }
}

final class TaskBox: Sendable {
    let task = Mutex<URLSessionTask?>(nil)
}

/// Exactly the session `URLSessionTransport` uploads with, without its delegate.
func spooldLikeSession(concurrency: Int) -> URLSession {
    URLSessionTransport.makeSession(concurrency: concurrency, deadlineSeconds: 300, idleSeconds: 60, delegate: nil)
}

func upload(_ arguments: Arguments) {
    guard let url = arguments.options["--url"] else { fail("upload needs --url") }
    let concurrency = arguments.int("--concurrency", 4)
    let method = arguments.options["--method"] ?? "PUT"
    let viaTransport = arguments.flags.contains("--via-transport")
    let signer = arguments.flags.contains("--s3-sign") ? environmentSigner() : nil
    let files = expandFiles(arguments.positionals)
    guard !files.isEmpty else { fail("upload needs files") }
    let template = URLTemplate(url)
    let sizes = files.map { (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? 0 }

    let loop = UploadLoop(concurrency: concurrency)
    let session = viaTransport ? nil : spooldLikeSession(concurrency: concurrency)
    let transport = viaTransport ? URLSessionTransport(concurrency: concurrency, deadlineSeconds: 300, idleSeconds: 60) : nil
    // Real item ids, as spoold sends them in Idempotency-Key.
    var generator = ItemIDGenerator(processTag: UInt64.random(in: 0...UInt64(UInt32.max)))
    let created = Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970)
    let ids = files.map { generator.next(at: created, originalName: ($0 as NSString).lastPathComponent) }
    let started = monotonicSeconds()
    for (n, path) in files.enumerated() {
        loop.slots.wait()
        loop.done.enter()
        let name = (path as NSString).lastPathComponent
        let id = ids[n]
        let target = template.url(id: id, originalName: name, createdAt: created)
        let size = sizes[n]
        if let transport {
            let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { fail("cannot open \(path)") }
            let request = UploadRequest(
                id: id, attempt: 1, url: target, method: method, body: BlobBody(descriptor: FileDescriptor(rawValue: fd), size: Int64(size)),
                contentType: "application/octet-stream", headers: [:])
            transport.start(request) { outcome in
                let success = (outcome.httpStatus ?? 0) / 100 == 2
                loop.finished(success: success, size: size, error: "\(outcome.httpStatus.map(String.init) ?? outcome.errorText ?? "?")")
            }
        } else if let session {
            var request = URLRequest(url: URL(string: target)!)
            request.httpMethod = method
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            request.setValue(id.rawValue, forHTTPHeaderField: "Idempotency-Key")
            if let signer, let components = URLComponents(string: target), let host = components.host {
                let hostHeader = components.port.map { "\(host):\($0)" } ?? host
                let headers = signer.headers(
                    method: method, host: hostHeader, path: components.percentEncodedPath, payloadHash: "UNSIGNED-PAYLOAD",
                    date: Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970))
                for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            }
            let box = TaskBox()
            let task = session.uploadTask(with: request, fromFile: URL(fileURLWithPath: path)) { _, response, error in
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                let success = error == nil && status / 100 == 2
                loop.finished(success: success, size: size, sent: box.task.withLock { $0?.countOfBytesSent },
                              error: error.map { "\($0)" } ?? "HTTP \(status)")
            }
            box.task.withLock { $0 = task }
            task.resume()
        }
    }
    loop.done.wait()
    let seconds = monotonicSeconds() - started
    let ok = loop.ok.load(ordering: .relaxed)
    let failed = loop.failed.load(ordering: .relaxed)
    let bytes = loop.bytes.load(ordering: .relaxed)
    print(String(
        format: "items=%d failed=%d bytes_sent=%d seconds=%.4f items_per_s=%.1f mb_per_s=%.2f", ok, failed,
        loop.sent.load(ordering: .relaxed), seconds, Double(ok) / seconds, Double(bytes) / 1e6 / seconds))
    if let error = loop.firstError.withLock({ $0 }) {
        FileHandle.standardError.write(Data("spoold-bench: first failure: \(error)\n".utf8))
    }
    exit(failed == 0 ? 0 : 1)
}

/// SigV4 for `upload --s3-sign`, from the same environment variables spoold reads first.
func environmentSigner() -> SigV4Signer {
    let environment = ProcessInfo.processInfo.environment
    guard let key = environment["AWS_ACCESS_KEY_ID"], let secret = environment["AWS_SECRET_ACCESS_KEY"] else {
        fail("--s3-sign needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
    }
    return SigV4Signer(
        credentials: AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: environment["AWS_SESSION_TOKEN"]),
        region: environment["AWS_REGION"] ?? "us-east-1")
}

// MARK: await-request

func awaitRequest(_ arguments: Arguments) {
    guard let log = arguments.options["--log"] else { fail("await-request needs --log") }
    let offset = arguments.int("--offset", 0)
    let timeout = Double(arguments.options["--timeout"] ?? "10") ?? 10
    // --rename FROM TO: rename a file (into a watched folder) and print its wall-clock time too.
    var renamedAt: Double?
    if let from = arguments.options["--rename"] {
        guard let to = arguments.positionals.first else { fail("--rename FROM needs TO") }
        var tv = timeval()
        gettimeofday(&tv, nil)
        renamedAt = Double(tv.tv_sec) + Double(tv.tv_usec) / 1e6
        guard rename(from, to) == 0 else { fail("rename \(from) -> \(to): errno \(errno)") }
    }
    let deadline = monotonicSeconds() + timeout
    while monotonicSeconds() < deadline {
        if let handle = FileHandle(forReadingAtPath: log) {
            defer { try? handle.close() }
            try? handle.seek(toOffset: UInt64(offset))
            let data = (try? handle.readToEnd()) ?? Data()
            if let newline = data.firstIndex(of: 0x0a) {
                let line = String(decoding: data[data.startIndex..<newline], as: UTF8.self)
                let fields = line.split(separator: " ")
                guard fields.count >= 2, let msec = Double(fields[0]), let requestTime = Double(fields[1]) else {
                    fail("unexpected log line: \(line)")
                }
                let start = String(format: "%.3f", msec - requestTime)
                print(renamedAt.map { "\(start) \(String(format: "%.6f", $0))" } ?? start)
                exit(0)
            }
        }
        usleep(500)
    }
    fail("no request within \(timeout) s")
}

// MARK: await-requests

func awaitRequests(_ arguments: Arguments) {
    guard let log = arguments.options["--log"] else { fail("await-requests needs --log") }
    let count = arguments.int("--count", 1)
    let pid = arguments.options["--pid"].flatMap { Int32($0) }
    let timeout = Double(arguments.options["--timeout"] ?? "600") ?? 600
    let follower = AccessLogFollower(path: log, offset: UInt64(arguments.int("--offset", 0)))
    let deadline = monotonicSeconds() + timeout
    while true {
        follower.poll()
        if follower.lines >= count { break }
        if let pid, kill(pid, 0) != 0 {
            print(follower.lines)
            exit(3)
        }
        guard monotonicSeconds() < deadline else { fail("only \(follower.lines) of \(count) requests within \(timeout) s") }
        usleep(50_000)
    }
    print(follower.lines)
}

// MARK: drop and feed

func epochSeconds() -> Double {
    var tv = timeval()
    gettimeofday(&tv, nil)
    return Double(tv.tv_sec) + Double(tv.tv_usec) / 1e6
}

/// Follows an nginx access log from an offset, counting lines; remembers the last line's $msec.
final class AccessLogFollower {
    let path: String
    var offset: UInt64
    var lines = 0
    var lastMsec = 0.0
    private var partial = Data()

    init(path: String, offset: UInt64) { (self.path, self.offset) = (path, offset) }

    func poll() {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        try? handle.seek(toOffset: offset)
        let data = (try? handle.readToEnd()) ?? Data()
        offset += UInt64(data.count)
        partial.append(data)
        guard let last = partial.lastIndex(of: 0x0a) else { return }
        let complete = partial[partial.startIndex...last]
        lines += complete.reduce(0) { $0 + ($1 == 0x0a ? 1 : 0) }
        let body = complete.dropLast()
        let start = body.lastIndex(of: 0x0a).map { body.index(after: $0) } ?? body.startIndex
        if let field = String(decoding: body[start...], as: UTF8.self).split(separator: " ").first, let msec = Double(field) {
            lastMsec = msec
        }
        partial = Data(partial[partial.index(after: last)...])
    }
}

func residentKiB(of pid: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
    }
    return nil
}

func drop(_ arguments: Arguments) {
    guard let dir = arguments.options["--dir"], let log = arguments.options["--log"] else { fail("drop needs --dir and --log") }
    let count = arguments.int("--count", 0)
    let timeout = Double(arguments.options["--timeout"] ?? "600") ?? 600
    let follower = AccessLogFollower(path: log, offset: UInt64(arguments.int("--offset", 0)))
    if let from = arguments.options["--from"] {
        // Outside the timing: the writers' part, under dot-names the daemon ignores.
        for file in expandFiles([from]) {
            let name = (file as NSString).lastPathComponent
            do { try FileManager.default.copyItem(atPath: file, toPath: dir + "/." + name) } catch { fail("copy \(file): \(error)") }
        }
    }
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasPrefix(".") }.sorted()
    let started = epochSeconds()
    for name in names {
        guard rename(dir + "/" + name, dir + "/" + name.dropFirst()) == 0 else { fail("rename \(name): errno \(errno)") }
    }
    let renamed = epochSeconds() - started
    let deadline = monotonicSeconds() + timeout
    while follower.lines < count {
        guard monotonicSeconds() < deadline else { fail("only \(follower.lines) of \(count) requests within \(timeout) s") }
        usleep(2000)
        follower.poll()
    }
    print(String(format: "dropped=%d seconds=%.4f rename_seconds=%.4f", names.count, follower.lastMsec - started, renamed))
}

func feed(_ arguments: Arguments) {
    guard let dir = arguments.options["--dir"], let log = arguments.options["--log"], let pid = arguments.options["--pid"] else {
        fail("feed needs --dir, --log and --pid")
    }
    let count = arguments.int("--count", 0)
    let size = arguments.int("--size", 512)
    let backlog = arguments.int("--backlog", 5000)
    let sampleAt = arguments.int("--sample-at", 30_000)
    let checkpoints = (arguments.options["--checkpoints"] ?? "").split(separator: ",").compactMap { Int($0) }.sorted()
    var rssAtCheckpoint: [Int: Int] = [:]
    let trace = arguments.options["--trace"].flatMap { fopen($0, "w") }
    defer { if let trace { fclose(trace) } }
    let follower = AccessLogFollower(path: log, offset: UInt64(arguments.int("--offset", 0)))
    let body = [UInt8](repeating: 0x61, count: size)
    var written = 0
    var rssAtSample: Int?
    var rangeAfter: (low: Int, high: Int)?
    var nextSample = monotonicSeconds()
    let started = monotonicSeconds()
    func sample() {
        guard monotonicSeconds() >= nextSample else { return }
        nextSample = monotonicSeconds() + 0.5
        follower.poll()
        guard let rss = residentKiB(of: pid) else { fail("daemon \(pid) is gone after \(follower.lines) uploads") }
        if rssAtSample == nil, follower.lines >= sampleAt, rss >= 8192 { rssAtSample = rss }
        for checkpoint in checkpoints where rssAtCheckpoint[checkpoint] == nil && follower.lines >= checkpoint && rss >= 8192 {
            rssAtCheckpoint[checkpoint] = rss
        }
        if let trace {
            fputs("\(follower.lines) \(rss)\n", trace)
            fflush(trace)
        }
        // A sample taken during a recycle's execve sees the new image before it has loaded.
        // (Such a sample is below 3/4 of the first image's level at M: left out of the range.)
        if let rssAtSample, rss >= rssAtSample * 3 / 4 {
            rangeAfter = (min(rangeAfter?.low ?? rss, rss), max(rangeAfter?.high ?? rss, rss))
        }
    }
    while follower.lines < count {
        while written < count, written - follower.lines < backlog {
            let name = String(format: "f%09d.dat", written)
            let temporary = dir + "/." + name
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0 else { fail("open \(temporary): errno \(errno)") }
            _ = body.withUnsafeBytes { write(fd, $0.baseAddress, size) }
            close(fd)
            guard rename(temporary, dir + "/" + name) == 0 else { fail("rename \(name): errno \(errno)") }
            written += 1
            if written % 256 == 0 { sample() }
        }
        usleep(20_000)
        nextSample = min(nextSample, monotonicSeconds())
        sample()
    }
    let end = residentKiB(of: pid) ?? 0
    let seconds = monotonicSeconds() - started
    print(String(
        format: "uploads=%d seconds=%.1f items_per_s=%.0f rss_at_sample_kib=%d rss_end_kib=%d rss_low_after_kib=%d rss_high_after_kib=%d",
        follower.lines, seconds, Double(follower.lines) / seconds, rssAtSample ?? 0, end, rangeAfter?.low ?? 0,
        rangeAfter?.high ?? 0)
        + checkpoints.map { " rss_at_\($0)_kib=\(rssAtCheckpoint[$0] ?? 0)" }.joined())
}

// MARK: codec

func codec(_ arguments: Arguments) {
    let count = arguments.int("--records", 100_000)
    var generator = ItemIDGenerator(processTag: 0x9f3a_b2c1)
    let now = Timestamp(millisecondsSinceEpoch: 1_790_000_000_000)
    let ids = (0..<count).map { generator.next(at: now, originalName: "file-\($0).dat") }

    func time(_ label: String, per: Int, _ body: () -> Int) {
        let start = monotonicSeconds()
        let sink = body()
        let seconds = monotonicSeconds() - start
        print(label.padding(toLength: 40, withPad: " ", startingAt: 0) + String(format: " %9.2f us/op  (%.3f s for %d; check %d)", seconds / Double(per) * 1e6, seconds, per, sink))
    }

    var log: [UInt8] = IndexLogCodec.encodeHeader()
    time("index record encode", per: count) {
        for id in ids {
            log += IndexLogCodec.encode(IndexRecord(.add, id, from: nil, to: ItemLocation(.pending, attempt: 0)))
        }
        return log.count
    }
    time("index log decode (whole file)", per: count) { IndexLogCodec.decode(log).records.count }
    let names = ids.map { ItemFileName(id: $0, attempt: 0, kind: .json).description }
    time("item file name parse", per: count) { names.reduce(0) { $0 + (ItemFileName(parsing: $1)?.attempt ?? 1) } }
    var dictionary: [ItemID: Int] = [:]
    time("dictionary insert by ItemID", per: count) {
        for (n, id) in ids.enumerated() { dictionary[id] = n }
        return dictionary.count
    }

    let jsonCount = min(count, 20_000)
    var metadata = ItemMetadata(id: ids[0], originalName: "file-0.dat", size: 4096, contentType: "application/octet-stream", createdAt: now)
    metadata.attempts = [AttemptRecord(number: 1, startedAt: now, finishedAt: now, outcome: "retryable", httpStatus: 503)]
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    var encoded = Data()
    time("metadata JSON encode (JSONEncoder)", per: jsonCount) {
        var total = 0
        for _ in 0..<jsonCount {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoded = try! enc.encode(metadata)
            total += encoded.count
        }
        return total
    }
    let bytes = Array(encoded)
    time("metadata JSON decode (JSONDecoder)", per: jsonCount) {
        var total = 0
        for _ in 0..<jsonCount {
            total += Int(try! JSONDecoder().decode(ItemMetadata.self, from: Data(bytes)).size)
        }
        return total
    }
    print("metadata json size: \(bytes.count) bytes")
}

// MARK: sha256

func sha256(_ args: Arguments) {
    let mib = args.int("--mib", 256)
    var buffer = [UInt8](repeating: 0, count: mib << 20)
    for i in buffer.indices { buffer[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
    let piece = 1 << 20
    func cpuSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
    // spoold's own Swift SHA-256 (SpoolCore) and libcrypto's (BulkSHA256, what bodies are hashed with).
    for (label, makeHasher) in [("swift", { SwiftHasher() as any BenchHasher }), ("libcrypto", { CryptoHasher() as any BenchHasher })] {
        for round in 1...3 {
            let start = monotonicSeconds()
            let startCPU = cpuSeconds()
            let hasher = makeHasher()
            buffer.withUnsafeBytes { all in
                var offset = 0
                while offset < all.count {
                    let end = min(all.count, offset + piece)
                    hasher.update(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                    offset = end
                }
            }
            let digest = hasher.finalize()
            let seconds = monotonicSeconds() - start
            let cpu = cpuSeconds() - startCPU
            // CPU time is the fairer number on a shared machine: wall time includes waiting for a core.
            print(String(format: "sha256 %@ round %d: %d MiB in %.3f s wall (%.1f MB/s), %.3f s CPU (%.1f MB/s), digest %@", label, round, mib,
                         seconds, Double(mib << 20) / seconds / 1e6, cpu, Double(mib << 20) / cpu / 1e6,
                         digest.prefix(8).map { String(format: "%02x", $0) }.joined()))
        }
    }
}

protocol BenchHasher: AnyObject {
    func update(_ bytes: UnsafeRawBufferPointer)
    func finalize() -> [UInt8]
}

final class SwiftHasher: BenchHasher {
    var hasher = SHA256()
    func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bytes) }
    func finalize() -> [UInt8] { hasher.finalize() }
}

final class CryptoHasher: BenchHasher {
    let hasher = BulkSHA256()
    func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bytes) }
    func finalize() -> [UInt8] { (try? hasher.finalize()) ?? [] }
}

// MARK: backlog-pass

/// A start's first listing of pending/ (the first 1,024 in line, on `--parts` threads: by default
/// one a core, at most four), then one pass over it as the daemon makes it for the queue beyond
/// memory: their times, the entries the pass wrote and the process's peak RSS, then the runs read
/// back in order.
func backlogPass(_ arguments: Arguments) {
    guard let path = arguments.positionals.first else { fail("backlog-pass needs a spool folder") }
    do {
        let spool = try Spool(path: path, create: false)
        let headStart = monotonicSeconds()
        let head = try spool.backlogPass.head(limit: 1024, excluding: [], parts: arguments.int("--parts", SplitListing.partsForThisMachine))
        let headSeconds = monotonicSeconds() - headStart
        let start = monotonicSeconds()
        let runs = try spool.backlogPass.run(excluding: [], pass: 1, chunkSize: arguments.int("--chunk", 65_536))
        let passSeconds = monotonicSeconds() - start
        var reader = try runs.open()
        var read = 0
        var last: BacklogEntry?
        var ordered = true
        while let entry = try reader.next() {
            if let last, entry < last { ordered = false }
            last = entry
            read += 1
        }
        reader.close()
        let headIsFirst = try head.entries == firstEntries(of: runs, count: head.entries.count)
        runs.remove()
        let readSeconds = monotonicSeconds() - start - passSeconds
        var census = ""
        if arguments.flags.contains("--census") {
            // A start's count of the queue: in a listing of its own (as status makes it, on one
            // thread), and made by the pass in its listing.
            let measure = FolderCensus.Measure.sample(budget: 65_536)
            let alone = monotonicSeconds()
            let counted = try spool.reading(.pending).census(measure: measure, keepsCreationMinutes: true)
            let both = monotonicSeconds()
            let withCensus = try spool.backlogPass.run(
                excluding: [], pass: 2, census: PassCensus(excluding: [], measure: measure, keepsCreationMinutes: true))
            withCensus.remove()
            census = String(format: " census_seconds=%.3f pass_with_census_seconds=%.3f census_items=%d",
                            both - alone, monotonicSeconds() - both, counted.items)
        }
        print(String(format: "head_seconds=%.3f pass_seconds=%.3f read_seconds=%.3f entries=%d runs=%d read=%d ordered=%@ head_is_first=%@",
                     headSeconds, passSeconds, readSeconds, runs.count, runs.names.count, read, ordered ? "yes" : "NO",
                     headIsFirst ? "yes" : "NO") + census + " peak_rss_kib=\(peakResidentKiB())")
    } catch {
        fail("\(error)")
    }
}

/// The first `count` entries of a pass's runs, in line order.
func firstEntries(of runs: BacklogRuns, count: Int) throws -> [BacklogEntry] {
    var reader = try runs.open()
    defer { reader.close() }
    var out: [BacklogEntry] = []
    while out.count < count, let entry = try reader.next() { out.append(entry) }
    return out
}

// MARK: fill

/// Fills a spool's pending/ with N items written straight into it, as a million `spoold enqueue`
/// calls would leave it but in a minute: each item's blob (B bytes) and json, made with the
/// spool's own codec, under ids one millisecond apart ending now (`--start-ms`: the first id's
/// time). No sync: a benchmark's spool. Items of a given `--attempt` (default 0) are untried.
func fill(_ arguments: Arguments) {
    guard let path = arguments.positionals.first else { fail("fill needs a spool folder") }
    let count = arguments.int("--count", 0)
    let size = arguments.int("--size", 16)
    let attempt = arguments.int("--attempt", 0)
    let state = arguments.options["--state"] ?? "pending"
    guard ["pending", "failed", "done"].contains(state) else { fail("--state is pending, failed or done") }
    let nowMs = Int64(epochSeconds() * 1000)
    let startMs = Int64(arguments.options["--start-ms"].flatMap { Int64($0) } ?? (nowMs - Int64(count) - 1000))
    do {
        _ = try Spool(path: path, create: true)
    } catch {
        fail("\(error)")
    }
    let folder = path + "/" + state
    let dirFD = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard dirFD >= 0 else { fail("open \(folder): errno \(errno)") }
    defer { close(dirFD) }
    var generator = ItemIDGenerator(processTag: UInt64.random(in: 0...UInt64.max))
    let body = [UInt8](repeating: 0x62, count: size)
    let started = monotonicSeconds()
    func write(_ name: String, _ bytes: [UInt8]) {
        let fd = openat(dirFD, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { fail("open \(state)/\(name): errno \(errno)") }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { fail("write \(state)/\(name): errno \(errno)") }
        close(fd)
    }
    for n in 0..<count {
        let at = Timestamp(millisecondsSinceEpoch: startMs + Int64(n))
        let name = "f\(n).dat"
        let id = generator.next(at: at, originalName: name)
        var metadata = ItemMetadata(id: id, originalName: name, size: Int64(size), contentType: "application/octet-stream", createdAt: at)
        metadata.attempts = []
        if state == "failed" { metadata.failureReason = "HTTP 400 (benchmark)" }
        write(ItemFileName(id: id, attempt: attempt, kind: .blob).description, body)
        write(ItemFileName(id: id, attempt: attempt, kind: .json).description, MetadataCodec.encode(metadata))
        if (n + 1) % 100_000 == 0 {
            FileHandle.standardError.write(Data("fill: \(n + 1) items, \(Int(monotonicSeconds() - started)) s\n".utf8))
        }
    }
    print(String(format: "filled=%d seconds=%.1f", count, monotonicSeconds() - started))
}

// MARK: first-line

/// Runs a command and times its first line of output (`spoold ls` streams: the first line comes
/// at once), then reads the rest; prints both times, the lines and the command's peak RSS.
func firstLine(_ arguments: [String]) {
    guard !arguments.isEmpty else { fail("first-line needs a command") }
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { fail("pipe: errno \(errno)") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    posix_spawn_file_actions_addclose(&actions, fds[0])
    posix_spawn_file_actions_addclose(&actions, fds[1])
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let start = monotonicSeconds()
    let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
    posix_spawn_file_actions_destroy(&actions)
    guard spawned == 0 else { fail("cannot run \(arguments[0]): error \(spawned)") }
    close(fds[1])
    var first: Double?
    var lines = 0
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        let newlines = buffer[0..<n].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        if first == nil, newlines > 0 { first = monotonicSeconds() - start }
        lines += newlines
    }
    close(fds[0])
    var status: Int32 = 0
    var usage = rusage()
    _ = wait4(pid, &status, 0, &usage)
    print(String(format: "first_line_seconds=%.3f all_seconds=%.3f lines=%d peak_rss_kib=%d exit=%d",
                 first ?? -1, monotonicSeconds() - start, lines, usage.ru_maxrss, (status >> 8) & 0xff))
}

func peakResidentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }
    return 0
}

// MARK: main

let all = CommandLine.arguments.dropFirst()
switch all.first {
case "upload": upload(Arguments(all.dropFirst(), flags: ["--via-transport", "--s3-sign"]))
case "await-request": awaitRequest(Arguments(all.dropFirst(), flags: []))
case "await-requests": awaitRequests(Arguments(all.dropFirst(), flags: []))
case "codec": codec(Arguments(all.dropFirst(), flags: []))
case "sha256": sha256(Arguments(all.dropFirst(), flags: []))
case "drop": drop(Arguments(all.dropFirst(), flags: []))
case "feed": feed(Arguments(all.dropFirst(), flags: []))
case "backlog-pass": backlogPass(Arguments(all.dropFirst(), flags: ["--census"]))
case "fill": fill(Arguments(all.dropFirst(), flags: []))
case "first-line": firstLine(Array(all.dropFirst()))
default:
    print("""
    Usage: spoold-bench upload --url URL [--concurrency N] [--method PUT|POST] [--via-transport] PATH...
           spoold-bench await-request --log ACCESS_LOG --offset BYTES [--timeout SECONDS] [--rename FROM TO]
           spoold-bench await-requests --log ACCESS_LOG --offset BYTES --count N [--pid PID] [--timeout SECONDS]
           spoold-bench drop --dir INCOMING --log ACCESS_LOG --offset BYTES --count N [--from DIR] [--timeout SECONDS]
           spoold-bench feed --dir INCOMING --log ACCESS_LOG --offset BYTES --count N --pid PID [--size B] [--backlog K] [--sample-at M]
           spoold-bench codec [--records N]
           spoold-bench sha256 [--mib N]
           spoold-bench backlog-pass [--chunk N] [--parts N] SPOOL
           spoold-bench fill --count N [--size B] [--attempt A] [--state pending|failed|done] [--start-ms T] SPOOL
           spoold-bench first-line COMMAND [ARGS...]
    """)
    exit(all.isEmpty || all.first == "--help" || all.first == "-h" ? 0 : 2)
}
