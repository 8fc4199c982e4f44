// spoold-receiver: a small loopback receiver for testing and trying spoold, not for production.
import Synchronization
import UploadReceiver
#if canImport(Glibc)
import Glibc
#endif

/// Writes one line to a file descriptor in a single write, unbuffered, so the first stdout line
/// reaches a pipe at once and log lines from connection threads do not interleave.
func writeLine(_ text: String, to fd: Int32 = 1) {
    let bytes = Array((text + "\n").utf8)
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// One log line, e.g. `PUT /up/a.txt 1234 bytes -> 201 (Idempotency-Key: 2026...-a.txt)`.
func logLine(for request: ReceivedRequest) -> String {
    let outcome: String
    if let status = request.answeredStatus {
        outcome = "\(status)"
    } else {
        outcome = request.bodyComplete ? "no answer" : "no answer (client left before the body ended)"
    }
    let key = request.header("Idempotency-Key").map { "Idempotency-Key: \($0)" } ?? "no Idempotency-Key"
    let stored = request.storedPath.map { ", stored as \($0)" } ?? ""
    let inflated = request.inflatedLength.map { " (gzip, \($0) inflated)" } ?? ""
    return "\(request.method) \(request.target) \(request.bodyLength) bytes\(inflated) -> \(outcome) (\(key)\(stored))"
}

let options: ReceiverOptions
do {
    switch try ReceiverOptions.parse(Array(CommandLine.arguments.dropFirst())) {
    case .showHelp:
        writeLine(ReceiverOptions.usage)
        exit(0)
    case .serve(let parsed):
        options = parsed
    }
} catch {
    writeLine("spoold-receiver: error: \(error.message)\nTry 'spoold-receiver --help'.", to: 2)
    exit(2)
}

// Block the stop signals before any thread starts, so every thread inherits the mask and the
// main thread alone receives them through sigwait.
signal(SIGPIPE, SIG_IGN)
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGINT)
sigaddset(&stopSignals, SIGTERM)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

let finalResponse = ScriptedResponse.status(options.status)
var script = options.failFirst > 0
    ? ResponseScript.perKey(Array(repeating: .status(500, body: "scripted failure\n"), count: options.failFirst), then: finalResponse)
    : ResponseScript.always(finalResponse)
let throttledCount = Mutex(0)
if options.throttle > 0 {
    let counted = ResponseScript { _ in
        throttledCount.withLock { $0 += 1 }
        return ScriptedResponse.slowDown
    }
    script = ResponseScript.throttling(perSecond: options.throttle, script, throttled: counted)
}
let receiver = UploadReceiver(
    script: script, storeDirectory: options.storeDirectory, keepBodiesInMemory: false)
if !options.quiet {
    receiver.setObserver { request in writeLine(logLine(for: request)) }
}

let port: UInt16
do {
    port = try receiver.start(port: options.port)
} catch {
    writeLine("spoold-receiver: error: \(error)", to: 2)
    exit(1)
}
writeLine("spoold-receiver: listening on http://127.0.0.1:\(port)/ (for testing, not production)")

var received: Int32 = 0
sigwait(&stopSignals, &received)
receiver.stop()
if options.throttle > 0 {
    let throttled = throttledCount.withLock { $0 }
    writeLine("spoold-receiver: stopped after \(receiver.handledRequestCount) requests, \(throttled) answered 503 SlowDown (--throttle \(options.throttle))")
} else if !options.quiet {
    writeLine("spoold-receiver: stopped after \(receiver.handledRequestCount) requests")
}
exit(0)
