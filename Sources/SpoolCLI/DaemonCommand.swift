import ArgumentKit
import Dispatch
import Glibc
import SpoolCore
import SpoolEngine
import SpoolStore
import SpoolSystem
import SpoolTransport

/// `spoold run` and `spoold drain`: the same engine, one waits for more files, one exits when done.
struct DaemonCommand {
    static func spec(drain: Bool) -> CommandSpec {
        CommandSpec(
            name: drain ? "drain" : "run",
            abstract: drain
                ? "Ingest and upload everything, waiting out retries, then exit."
                : "Ingest and upload until SIGTERM/SIGINT (the default command).",
            discussion: drain
                ? """
                On SIGTERM or SIGINT, or when --max-time is reached, drain stops taking work and
                logs how many items remain (pending, in flight, in incoming/); they stay in the
                spool for the next run or drain. After a signal, uploads in progress finish (a second
                signal cancels them); after --max-time they get 10 s (or --max-time, if shorter),
                then are cancelled. A cancelled upload's attempt is handed back uncounted.
                A recycle (--recycle-after) does not end the drain: its counts and --max-time go on.
                Exit codes:
                  0  every item was uploaded
                  1  some items ended in failed/ during this drain (see 'spoold ls failed')
                  2  usage error
                  3  the spool could not be used, or a write could not be made durable
                  4  another spoold is already working on this spool
                  5  stopped (signal or --max-time) before everything was uploaded; nothing is lost
                """
                : """
                On SIGTERM or SIGINT spoold stops taking work, lets uploads in progress finish (their
                outcome is recorded as usual), and exits 0. A second signal cancels them; their
                attempts are handed back uncounted.
                Every --recycle-after requests spoold re-executes itself at a quiet moment: it takes
                no new work, lets uploads in flight finish (30 s at most, then hands them back),
                and execs itself with the same pid, arguments and environment, keeping the spool
                lock; a signal sent meanwhile is kept for the new image.
                Exit codes: 0 stopped cleanly, 2 usage error, 3 spool unusable or write not durable,
                4 another spoold is already working on this spool.
                """,
            options: [
                CommonOptions.spool,
                OptionSpec("url", valueName: "URL",
                           help: "Where to upload. A URL ending in '/' gets the original file name appended (percent-encoded); {name} and {id} are substituted.",
                           defaultDescription: "$SPOOLD_URL"),
                OptionSpec("method", valueName: "METHOD", help: "PUT or POST.", defaultDescription: "PUT"),
                OptionSpec("concurrency", valueName: "N", help: "Uploads at once (1-256).", defaultDescription: "4"),
                OptionSpec("max-attempts", valueName: "N", help: "Attempts per item before it is parked in failed/ (1-100).",
                           defaultDescription: "3"),
                OptionSpec("retry-base", valueName: "SECONDS",
                           help: "Backoff before the second attempt; doubles after each failure, with jitter.",
                           defaultDescription: "1"),
                OptionSpec("max-backoff", valueName: "SECONDS", help: "Longest wait between attempts (also caps Retry-After).",
                           defaultDescription: "300"),
                OptionSpec("timeout", valueName: "SECONDS", help: "Overall deadline of one request, enforced by spoold.",
                           defaultDescription: "300"),
                OptionSpec("idle-timeout", valueName: "SECONDS", help: "Longest silence from the server during a request.",
                           defaultDescription: "60"),
                OptionSpec("header", kind: .repeatedValue, valueName: "'NAME: VALUE'",
                           help: "A header sent with every request; an item's own headers win."),
                OptionSpec("header-file", kind: .repeatedValue, valueName: "FILE",
                           help: "Secret headers, one 'Name: value' per line (e.g. Authorization); sent with every request, never stored or logged."),
                OptionSpec("header-env", kind: .repeatedValue, valueName: "VAR",
                           help: "An environment variable holding a secret 'Name: value' header; like --header-file."),
                OptionSpec("form", valueName: "FIELD",
                           help: "Send multipart/form-data: the blob as file part FIELD (with the item's name and content type) plus the item's fields."),
                OptionSpec("allow-redirect-host", kind: .repeatedValue, valueName: "HOST",
                           help: "A host a 307/308 redirect may lead to besides the upload URL's own origin."),
                OptionSpec("allow-url", kind: .repeatedValue, valueName: "PREFIX",
                           help: "An item's own \"url\" (sidecar) is used only if it starts with such a prefix."),
                OptionSpec("settle", valueName: "SECONDS",
                           help: "A file found by a scan (not announced by inotify) is taken once it is this old.",
                           defaultDescription: "2"),
                OptionSpec("recycle-after", valueName: "N",
                           help: "Re-execute spoold after N requests (same pid, lock held; uploads in flight finish first) to give back memory URLSession keeps; 0 never.",
                           defaultDescription: "50000"),
                .flag("keep-done", help: "Move uploaded items to done/ instead of deleting them."),
                .flag("verbose", short: "v", help: "Log every item taken and every request (same as SPOOLD_LOG=debug)."),
            ] + (drain ? [maximumTime] : []),
            positionals: [])
    }

    static let maximumTime = OptionSpec(
        "max-time", valueName: "SECONDS",
        help: "Stop taking work after this long, even if items remain (exit code 5); e.g. for a drain from cron.",
        defaultDescription: "no limit")

    var drain: Bool
    var spoolPath: String
    var configuration: EngineConfiguration
    var timeout: Double
    var idleTimeout: Double
    var verbose: Bool
    var redirects: RedirectPolicy

    init(_ arguments: ParsedArguments, context: CommandContext, drain: Bool) throws {
        let command = drain ? "drain" : "run"
        self.drain = drain
        spoolPath = CommonOptions.spoolPath(arguments, context)
        guard let url = arguments.value("url") ?? context.environment["SPOOLD_URL"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw ArgumentError("no upload URL: give --url URL or set SPOOLD_URL", command: command)
        }
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), url.count > 8, !url.contains(" ") else {
            throw ArgumentError("--url '\(url)' is not an http:// or https:// URL", command: command)
        }
        let method = (arguments.value("method") ?? "PUT").uppercased()
        guard method == "PUT" || method == "POST" else {
            throw ArgumentError("--method must be PUT or POST, not '\(arguments.value("method")!)'", command: command)
        }
        let policy = RetryPolicy(
            maximumAttempts: try arguments.int("max-attempts", range: 1...100) ?? 3,
            baseDelaySeconds: try arguments.seconds("retry-base", range: 0...86_400) ?? 1,
            maximumBackoffSeconds: try arguments.seconds("max-backoff", range: 0...604_800) ?? 300)
        configuration = EngineConfiguration(
            url: URLTemplate(url), method: method,
            concurrency: try arguments.int("concurrency", range: 1...256) ?? 4,
            policy: policy, keepDone: arguments.flag("keep-done"),
            settleSeconds: try arguments.seconds("settle", range: 0...86_400) ?? 2,
            exitWhenIdle: drain, headers: try CommonOptions.headers(arguments, command: command),
            formField: try DaemonCommand.formField(arguments, command: command),
            allowedURLs: try DaemonCommand.allowedURLs(arguments, command: command),
            credentialHeaders: try CredentialHeaders.load(arguments, environment: context.environment, command: command),
            maximumRunSeconds: drain ? try arguments.seconds("max-time", range: 0.1...31_536_000) : nil,
            recycleAfterRequests: try arguments.int("recycle-after", range: 0...1_000_000_000) ?? 50_000)
        redirects = RedirectPolicy(allowedHosts: Set(arguments.values("allow-redirect-host")))
        timeout = try arguments.seconds("timeout", range: 0.1...86_400) ?? 300
        idleTimeout = try arguments.seconds("idle-timeout", range: 0.1...86_400) ?? 60
        verbose = arguments.flag("verbose")
    }

    static func formField(_ arguments: ParsedArguments, command: String) throws -> String? {
        guard let field = arguments.value("form") else { return nil }
        guard !field.isEmpty, !field.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 }) else {
            throw ArgumentError("--form needs a field name without control characters", command: command)
        }
        return field
    }

    static func allowedURLs(_ arguments: ParsedArguments, command: String) throws -> URLAllowList {
        let prefixes = arguments.values("allow-url")
        for prefix in prefixes where HTTPOrigin(prefix) == nil {
            throw ArgumentError("--allow-url '\(prefix)' is not an http:// or https:// URL prefix", command: command)
        }
        return URLAllowList(prefixes)
    }

    func run(context: CommandContext) throws -> ExitCode {
        signal(SIGPIPE, SIG_IGN)
        // First, before URLSession starts threads: they inherit the blocked mask.
        let signals = try StopSignals()
        // What this process was given (a supervisor's pipe, say) is passed on by a recycle.
        let inherited = ProcessImage.inheritedDescriptors()
        var log = context.log
        if verbose { log.minimumLevel = .debug }
        var handoff = context.environment[RecycleHandoff.variable].flatMap(RecycleHandoff.init(parsing:))
        let spool = try Spool(path: spoolPath)
        let lock = try SpoolLock(spool: spool, inherited: handoff.map { FileDescriptor(rawValue: $0.lockDescriptor) })
        // A marker left by a daemon that died mid-outage says nothing about now.
        OutageMarker.remove(in: spool)
        defer { OutageMarker.remove(in: spool) }
        while true {
            let transport = URLSessionTransport(
                concurrency: configuration.concurrency, deadlineSeconds: timeout, idleSeconds: idleTimeout,
                redirects: redirects)
            let engine = try Engine(
                spool: spool, transport: transport, clock: context.clock, configuration: configuration, log: log,
                processTag: UInt64.random(in: 0...UInt64.max))
            engine.stopSignals = signals
            let startedAt = handoff?.startedAt ?? context.clock.now()
            if let handoff {
                engine.resume(from: handoff.summary, startedAt: startedAt)
                log.info("\(drain ? "draining" : "running") again after recycle \(handoff.generation) (pid \(getpid()))")
            } else {
                log.info("\(drain ? "draining" : "running") spool \(spool.path) to \(configuration.url.template) (\(configuration.method), \(configuration.concurrency) at once, \(configuration.policy.maximumAttempts) attempts)")
            }
            // The lock is held until what is left has been counted.
            let summary = try withExtendedLifetime(transport) { try engine.run() }
            if summary.stop == .recycle {
                let next = RecycleHandoff(
                    lockDescriptor: lock.descriptor.rawValue, generation: (handoff?.generation ?? 0) + 1,
                    startedAt: startedAt, summary: summary)
                recycle(next, requests: engine.requestsStarted, keep: inherited, log: log)
                // Only if execve failed: carry on in this process.
                handoff = next
                continue
            }
            withExtendedLifetime((lock, signals)) {}
            return try finish(summary, spool: spool, log: log)
        }
    }

    /// Re-executes this program (same pid, arguments and environment, plus the handoff) to give
    /// back what URLSession keeps; the spool lock's descriptor is kept open, so the lock never
    /// lapses, and SIGTERM/SIGINT stay blocked, so one sent meanwhile waits for the new image.
    /// Returns only if execve failed.
    func recycle(_ handoff: RecycleHandoff, requests: Int, keep inherited: Set<Int32>, log: EventLog) {
        let rss = ProcessImage.residentKilobytes().map { "\($0 / 1024).\($0 % 1024 * 10 / 1024) MiB" } ?? "unknown"
        log.info("recycling after \(requests) requests (RSS \(rss)): re-executing spoold, recycle \(handoff.generation)")
        let prefix = RecycleHandoff.variable + "="
        let environment = ProcessImage.environment().filter { !$0.hasPrefix(prefix) } + [prefix + handoff.encoded]
        let error = ProcessImage.reexecute(arguments: CommandLine.arguments, environment: environment, keep: Array(inherited.union([handoff.lockDescriptor])))
        log.warning("cannot re-execute for the recycle (\(error)); carrying on in this process")
    }

    func finish(_ summary: RunSummary, spool: Spool, log: EventLog) throws -> ExitCode {
        guard drain else {
            log.info("stopped: \(summary.line)")
            return .success
        }
        log.info("drain \(summary.stop == nil ? "finished" : "stopped"): \(summary.line)")
        if let stop = summary.stop, let left = try remaining(in: spool) {
            let cause = stop == .requested ? "by a signal" : "at --max-time"
            log.warning("drain stopped \(cause) before everything was uploaded: \(left); they stay in the spool for the next run or drain")
            return .stopped
        }
        return summary.failed > 0 ? .partial : .success
    }

    /// What a stopped drain leaves, counted on disk (the truth), or nil when nothing is left.
    func remaining(in spool: Spool) throws -> String? {
        let left = try SpoolSummary.load(spool)
        let pending = left.states[.pending]?.count ?? 0
        let inflight = left.states[.inflight]?.count ?? 0
        guard pending + inflight + left.incomingFiles > 0 else { return nil }
        return "\(pending) pending, \(inflight) in flight, \(left.incomingFiles) in incoming/"
    }
}

extension RecycleHandoff {
    fileprivate init(lockDescriptor: Int32, generation: Int, startedAt: Timestamp, summary: RunSummary) {
        self.init(
            lockDescriptor: lockDescriptor, generation: generation, startedAt: startedAt, ingested: summary.ingested,
            uploaded: summary.uploaded, failed: summary.failed, retried: summary.retried)
    }

    /// The counts of the run so far, for the next image's engine.
    fileprivate var summary: RunSummary {
        var summary = RunSummary()
        (summary.ingested, summary.uploaded, summary.failed, summary.retried) = (ingested, uploaded, failed, retried)
        return summary
    }
}
