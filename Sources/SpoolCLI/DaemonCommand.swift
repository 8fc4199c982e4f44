import ArgumentKit
import Dispatch
import Glibc
import SpoolCore
import SpoolCurlTransport
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
                A full spool file system pauses taking files in (they wait in incoming/; 'spoold status'
                shows it) while uploads, which free space, go on.
                A recycle (--recycle-above, --recycle-after) does not end the drain: its counts and
                --max-time go on.
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
                A full spool file system pauses taking files in (they wait in incoming/; logged once,
                shown by 'spoold status') while uploads, which free space, go on.
                Under systemd (NOTIFY_SOCKET set) it reports READY=1 after start-up recovery, STATUS=
                with the queue, WATCHDOG=1 every half WATCHDOG_USEC and STOPPING=1 (see
                contrib/spoold.service).
                Once its memory has grown --recycle-above MiB past its level after warming up (or
                after --recycle-after requests), spoold re-executes itself: it takes no new work,
                lets uploads in flight finish (30 s at most, then hands them back), and execs
                itself with the same pid, arguments and environment, keeping the spool lock; a
                signal sent meanwhile is kept for the new image.
                Exit codes: 0 stopped cleanly, 2 usage error, 3 spool unusable or write not durable,
                4 another spoold is already working on this spool.
                """,
            options: [
                CommonOptions.spool,
                OptionSpec("url", valueName: "URL",
                           help: "Where to upload. A URL ending in '/' gets the original name appended: the file's path below incoming/ (each segment percent-encoded, slashes kept); {name} (the same), {id} and {host} (this machine's host name, read at start) are substituted, and so are {date} (YYYY-MM-DD), {year}, {month}, {day} and {hour} of the item's creation time in UTC (from its json, so every retry gets the same URL); any other {word} is a usage error. s3://BUCKET/PREFIX uploads to an S3-compatible store (see docs/s3.md 'S3-compatible object stores'); tus+https://HOST/PATH/ (or tus+http://) makes each item a resumable tus 1.0 upload created at https://HOST/PATH/, with no name appended (see docs/tus.md).",
                           defaultDescription: "$SPOOLD_URL"),
                method, concurrency.spec,
            ] + RetryOptions.specs + [
                timeout.spec, idleTimeout.spec,
                CommonOptions.transport, CommonOptions.cacert, CommonOptions.capath, CommonOptions.cert, CommonOptions.key,
                OptionSpec("limit-rate", valueName: "RATE|TIMETABLE",
                           help: "Upload at most RATE bytes per second in all, shared among the uploads at once (bodies; with either transport), e.g. 500K or 2M (K, M, G: powers of 1024); or a timetable in local time, as rclone's --bwlimit: '08:00,512K 18:00,off' (every day 512 KiB/s from 08:00, no limit from 18:00), with weekdays 'Mon-08:00,512K Fri-18:00,off'. See docs/http.md 'Upload windows and a rate timetable'."),
                OptionSpec("upload-window", kind: .repeatedValue, valueName: "START-END",
                           help: "Send uploads only inside this window of local time, e.g. 22:00-06:00 (every night), Sat-08:00-18:00 or Fri-18:00-Mon-06:00; repeat for several. Outside them uploads are held while files are still taken in ('spoold status': paused until HH:MM); a window that closes lets uploads in flight finish."),
                .flag("window-cuts", help: "When an upload window closes, cancel the uploads in flight and hand their attempts back uncounted, instead of letting them finish."),
                CommonOptions.http11,
                CommonOptions.header, CommonOptions.headerFile, CommonOptions.headerEnv,
                OptionSpec("form", valueName: "FIELD",
                           help: "Send multipart/form-data: the blob as file part FIELD (with the item's name and content type) plus the item's fields."),
                OptionSpec("compress", valueName: "CODING",
                           help: "Send bodies compressed while they stream, with Content-Encoding: CODING (gzip; with an s3:// URL the object is stored compressed). Items that would not shrink go as they are: names ending in a compressed format's extension (jpg, png, gif, webp, mp4, mov, mkv, mp3, zip, gz, tgz, bz2, xz, zst, 7z, rar, docx...), compressed content types (image/jpeg, video/*, application/zip...), items with their own Content-Encoding, and items under 1 KiB. See docs/http.md 'Compression'.",
                           completion: .choices(ContentCoding.allCases.map(\.rawValue))),
                OptionSpec("content-digest", valueName: "ALGORITHM",
                           help: "Send an RFC 9530 Content-Digest header computed over the exact body sent (multipart included). ALGORITHM: sha-256.",
                           completion: .choices(ContentDigest.allCases.map(\.rawValue))),
                OptionSpec("allow-redirect-host", kind: .repeatedValue, valueName: "HOST",
                           help: "A host a 307/308 redirect may lead to besides the upload URL's own origin; with a tus+ URL also a host the server's upload URLs may be on."),
                OptionSpec("tus-chunk-size", valueName: "BYTES",
                           help: "With a tus+ URL: most bytes one request carries (64K-4G; K, M, G: powers of 1024). A kill -9 or a dropped connection costs at most one chunk sent again, on a server that keeps only whole requests.",
                           defaultDescription: "16M"),
                OptionSpec("allow-url", kind: .repeatedValue, valueName: "PREFIX",
                           help: "An item's own \"url\" (sidecar) is used only if it starts with such a prefix."),
                OptionSpec("success-json", valueName: "PATH=VALUE",
                           help: "A 2xx answer is success only if its JSON body holds VALUE at the dot PATH (e.g. status.code=200); otherwise the attempt is retried. VALUE: a number, true, false, null, \"string\" or a bare string."),
                OptionSpec("retry-on", kind: .repeatedValue, valueName: "STATUS[,STATUS...]",
                           help: "Retry these HTTP statuses although they are final by default (e.g. 404,409 from an eventually consistent receiver)."),
                OptionSpec("final-on", kind: .repeatedValue, valueName: "STATUS[,STATUS...]",
                           help: "Park an item in failed/ at once on these statuses although they are retried by default (e.g. 501)."),
                OptionSpec("on-success", valueName: "CMD",
                           help: "Run '/bin/sh -c CMD' after each item is uploaded, with SPOOLD_ID, SPOOLD_NAME, SPOOLD_STATUS, SPOOLD_SIZE and SPOOLD_SPOOL set (see docs/operations.md 'Hooks')."),
                OptionSpec("on-failure", valueName: "CMD",
                           help: "Run '/bin/sh -c CMD' after each item is parked in failed/; also SPOOLD_REASON."),
                hookTimeout.spec, settle.spec, queueMemory.spec, maximumWatches.spec, recycleAbove.spec, recycleAfter.spec,
                .flag("keep-done", help: "Move uploaded items to done/ instead of deleting them."),
                .flag("allow-hardlinks", help: "Take files in incoming/ that have more than one hard link (copied, the incoming name removed); by default they are refused and left alone, since a file linked in may be anyone's. See docs/guarantees.md 'Security model'."),
                .flag("no-direct", help: "Make every file from incoming/ a durable item (json, index record, fsync) before its first request, instead of sending it straight from incoming/ while the endpoint answers and nothing queued is due. See docs/spool.md 'Direct uploads'."),
                CommonOptions.maximumSpoolSizeOption,
                OptionSpec("max-items", valueName: "N",
                           help: "Most items queued (pending and in flight); each is two files, so two inodes. The queue goes at most one item over it."),
                OptionSpec("when-full", valueName: "block|drop-oldest",
                           help: "At --max-spool-size or --max-items: new files wait in incoming/ untouched (block), or the oldest pending items are deleted to make room (drop-oldest).",
                           defaultDescription: SpoolSizeLimit.WhenFull.block.rawValue,
                           completion: .choices(SpoolSizeLimit.WhenFull.allCases.map(\.rawValue))),
                OptionSpec("metrics-file", valueName: "PATH",
                           help: "Write Prometheus metrics to PATH (e.g. for node_exporter's textfile collector, a *.prom name), replaced atomically every 10 s and at exit."),
                .flag("verbose", short: "v", help: "Log every item taken and every request (same as SPOOLD_LOG=debug)."),
            ] + S3Options.specs + (drain ? [
                maximumTime,
                .flag("progress", help: "Show a progress line (items, bytes, rate, ETA, retries waiting) on stderr, redrawn in place; the default when stderr is a terminal."),
                .flag("no-progress", help: "No progress line, even on a terminal."),
            ] : []),
            positionals: [])
    }

    // The options only `run` and `drain` have that have a default, declared with it.
    static let method = OptionSpec(
        "method", valueName: "METHOD", help: "PUT or POST.", defaultDescription: EngineConfiguration.defaultMethod,
        completion: .choices(["PUT", "POST"]))
    static let concurrencyRange = 1...256
    static let concurrency = DefaultedOption.integer(
        "concurrency",
        help: "Uploads at once (\(concurrencyRange.lowerBound)-\(concurrencyRange.upperBound)); with an s3:// URL also the parts of one multipart upload in flight at once (at most 16).",
        range: concurrencyRange, default: EngineConfiguration.defaultConcurrency)
    static let timeout = DefaultedOption.seconds(
        "timeout", help: "Overall deadline of one request, enforced by spoold.", range: 0.1...86_400, default: 300)
    static let idleTimeout = DefaultedOption.seconds(
        "idle-timeout", help: "Longest silence from the server during a request.", range: 0.1...86_400, default: 60)
    static let hookTimeout = DefaultedOption.seconds(
        "hook-timeout",
        help: "A hook still running after this long gets SIGTERM, then SIGKILL 5 s later (its whole process group).",
        range: 0.1...86_400, default: HookRunner.Commands.defaultTimeoutSeconds)
    static let settle = DefaultedOption.seconds(
        "settle",
        help: "A file found by a scan (not announced by inotify) is taken as soon as no process holds it open for writing; where the kernel cannot tell (no read lease: another user's file without CAP_LEASE, a file system without leases), once its mtime is this old and its size and mtime stay unchanged for this long.",
        range: 0...86_400, default: EngineConfiguration.defaultSettleSeconds)
    static let queueMemory = DefaultedOption.integer(
        "queue-memory",
        help: "Hold at most N queued items in memory; the rest wait in pending/ and are read in order when their turn comes, so memory stays the same however large the queue. See docs/operations.md 'Order and memory'.",
        range: 100...10_000_000, default: EngineConfiguration.defaultQueueMemory)
    static let maximumWatches = DefaultedOption.integer(
        "max-watches",
        help: "Most inotify watches on incoming/ and its subfolders (each is kernel memory from the user's fs.inotify.max_user_watches); files in folders past it are found by the rescan every 60 s, said once in the log.",
        range: 1...1_000_000, default: EngineConfiguration.defaultMaximumWatches)
    /// Chosen by measurement (docs/operations.md "Long runs: recycling").
    static let recycleAbove = DefaultedOption.integer(
        "recycle-above", valueName: "MIB",
        help: "Re-execute spoold (same pid, lock held; uploads in flight finish first) once its resident memory has grown MIB MiB above its level after its first \(RecycleTrigger.defaultWarmUpRequests) requests, to give back what URLSession keeps; 0 never. See docs/operations.md 'Long runs: recycling'.",
        range: 0...1_000_000, default: 6)
    static let recycleAfter = DefaultedOption.integer(
        "recycle-after", help: "Re-execute spoold after N requests at the latest, whatever its memory; 0 never.",
        range: 0...1_000_000_000, default: 200_000)

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
    var hooks: HookRunner.Commands
    /// Environment variables hooks do not inherit: the secrets (`--header-env`'s variables, the
    /// AWS credentials) and the recycle handoff.
    var hookWithheldVariables: Set<String>
    var metricsPath: String?
    var sizeLimit: SpoolSizeLimit?
    /// `drain` on a terminal (or `--progress`): the redrawn progress line.
    var progress: Bool
    /// With `--url s3://...`: the store and the credentials each attempt is signed with.
    var s3: S3Options?
    /// `--transport curl`: libcurl's options; nil: URLSession.
    var curl: CurlOptions?
    /// With a tus+ URL, `--tus-chunk-size`: most bytes one request carries; nil otherwise.
    var tusChunkSize: Int64?
    static let tusChunkSizes: ClosedRange<Int64> = (64 << 10)...(4 << 30)
    /// `--limit-rate`: body bytes per second for the whole daemon, whichever the transport, one
    /// rate or a timetable; nil: no limit.
    var limitRate: RateTimetable?
    /// `--allow-hardlinks`: files in incoming/ with more than one link are taken (copied).
    var allowHardLinks: Bool

    /// Files secrets were read from (`--header-file`, the S3 shared credentials file): warned
    /// about at start when others may read or change them (`SecretFileRule`).
    var secretFiles: [String]

    /// Whether this process holds a secret (`--header-file`, `--header-env`, a credential given
    /// with `--header`, S3 credentials): then it makes itself not dumpable.
    var holdsSecrets: Bool {
        !configuration.credentialHeaders.isEmpty || s3 != nil || configuration.headers.keys.contains(where: HeaderFields.isCredential)
            || curl?.clientCertificate != nil
    }

    init(_ arguments: ParsedArguments, context: CommandContext, drain: Bool) throws {
        let command = drain ? "drain" : "run"
        self.drain = drain
        spoolPath = CommonOptions.spoolPath(arguments, context)
        guard let url = arguments.value("url") ?? context.environment["SPOOLD_URL"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw ArgumentError("no upload URL: give --url URL or set SPOOLD_URL", command: command)
        }
        let lower = url.lowercased()
        let isTus = lower.hasPrefix("tus+http://") || lower.hasPrefix("tus+https://")
        if isTus {
            for option in ["form", "method", "content-digest", "success-json"] where arguments.value(option) != nil {
                throw ArgumentError(
                    "--\(option) cannot be used with a tus+ URL (tus sends its own requests: POST, HEAD and PATCH of the bytes; the server's checksum extension covers each PATCH)",
                    command: command)
            }
        } else if arguments.value("tus-chunk-size") != nil {
            throw ArgumentError("--tus-chunk-size needs a tus+http:// or tus+https:// URL", command: command)
        }
        let endpoint = isTus ? String(url.dropFirst(4)) : url
        if S3Target.isS3(url) {
            s3 = try S3Options(url: url, arguments, environment: context.environment, command: command)
            if arguments.value("form") != nil || (arguments.value("method").map { $0.uppercased() != "PUT" } ?? false) {
                throw ArgumentError("--form and --method POST cannot be used with an s3:// URL (objects are sent with PUT)", command: command)
            }
        } else {
            let lowerEndpoint = endpoint.lowercased()
            guard lowerEndpoint.hasPrefix("http://") || lowerEndpoint.hasPrefix("https://"), endpoint.count > 8, !endpoint.contains(" ") else {
                throw ArgumentError(
                    "--url '\(url)' is not an http://, https://, s3://, tus+http:// or tus+https:// URL", command: command)
            }
            for option in ["s3-endpoint", "s3-region", "s3-part-size"] where arguments.value(option) != nil {
                throw ArgumentError("--\(option) needs an s3:// URL", command: command)
            }
            if arguments.flag("s3-path-style") { throw ArgumentError("--s3-path-style needs an s3:// URL", command: command) }
            if !arguments.values("s3-allow-header").isEmpty {
                throw ArgumentError("--s3-allow-header needs an s3:// URL", command: command)
            }
            do {
                try URLTemplate.validate(endpoint)
            } catch {
                throw ArgumentError("--url: \(error)", command: command)
            }
        }
        let host = HostName.current()
        let urlTemplate = s3?.urlTemplate(host: host) ?? URLTemplate(endpoint, host: host, appendsName: !isTus)
        if urlTemplate.usesHost && host.isEmpty {
            throw ArgumentError("--url uses {host}, but this machine's host name is empty (set one with hostname(1))", command: command)
        }
        let method = (arguments.value("method") ?? EngineConfiguration.defaultMethod).uppercased()
        guard method == "PUT" || method == "POST" else {
            throw ArgumentError("--method must be PUT or POST, not '\(arguments.value("method")!)'", command: command)
        }
        let policy = try RetryOptions.policy(arguments)
        configuration = EngineConfiguration(
            url: urlTemplate, method: method,
            concurrency: try DaemonCommand.concurrency.value(in: arguments),
            policy: policy, keepDone: arguments.flag("keep-done"),
            settleSeconds: try DaemonCommand.settle.value(in: arguments),
            exitWhenIdle: drain, headers: try CommonOptions.headers(arguments, command: command),
            formField: try DaemonCommand.formField(arguments, command: command),
            allowedURLs: try DaemonCommand.allowedURLs(arguments, command: command),
            credentialHeaders: try CredentialHeaders.load(arguments, environment: context.environment, command: command),
            maximumRunSeconds: drain ? try arguments.seconds("max-time", range: 0.1...31_536_000) : nil,
            outcomeRules: try DaemonCommand.outcomeRules(arguments, command: command),
            contentDigest: try DaemonCommand.contentDigest(arguments, command: command),
            recycle: RecycleTrigger(
                maximumRequests: try DaemonCommand.recycleAfter.value(in: arguments),
                growthLimitKiB: try DaemonCommand.recycleAbove.value(in: arguments) * 1024))
        configuration.multipartThreshold = s3?.partSize
        configuration.tusUploads = isTus
        tusChunkSize = isTus
            ? try arguments.bytes("tus-chunk-size", range: DaemonCommand.tusChunkSizes) ?? TusTransport.defaultChunkSize : nil
        configuration.compression = try DaemonCommand.compression(arguments, command: command)
        if configuration.compression != nil && isTus {
            throw ArgumentError(
                "--compress cannot be used with a tus+ URL: a tus upload sends the file's own bytes, by offset "
                    + "(docs/http.md 'Compression')", command: command)
        }
        configuration.secrets = SecretRedaction(
            SecretRedaction.values(of: configuration.credentialHeaders, all: true) + SecretRedaction.values(of: configuration.headers)
                + [s3?.credentials.secretAccessKey, s3?.credentials.sessionToken].compactMap { $0 })
        configuration.s3ItemHeaders = s3?.itemHeaders
        if s3 != nil {
            // The operator's own headers are theirs to choose, except one that copies an object.
            for name in configuration.headers.keys.sorted() + configuration.credentialHeaders.keys.sorted() {
                if let problem = S3ItemHeaderRule.neverProblem(name) { throw ArgumentError(problem, command: command) }
            }
        }
        configuration.directUploads = !arguments.flag("no-direct")
        allowHardLinks = arguments.flag("allow-hardlinks")
        secretFiles = arguments.values("header-file") + (s3?.credentialsFile.map { [$0.path] } ?? [])
        configuration.maximumWatches = try DaemonCommand.maximumWatches.value(in: arguments)
        configuration.queueMemory = try DaemonCommand.queueMemory.value(in: arguments)
        redirects = RedirectPolicy(allowedHosts: Set(arguments.values("allow-redirect-host")))
        timeout = try DaemonCommand.timeout.value(in: arguments)
        idleTimeout = try DaemonCommand.idleTimeout.value(in: arguments)
        verbose = arguments.flag("verbose")
        curl = try CommonOptions.curlOptions(arguments, command: command)
        // The client certificate's private key is a secret file like the others.
        if let certificate = curl?.clientCertificate { secretFiles.append(curl?.clientKey ?? certificate) }
        limitRate = try DaemonCommand.limitRate(arguments, command: command)
        configuration.limitRate = limitRate
        configuration.uploadWindows = try DaemonCommand.uploadWindows(arguments, command: command)
        configuration.windowCuts = arguments.flag("window-cuts")
        if configuration.windowCuts && configuration.uploadWindows == nil {
            throw ArgumentError("--window-cuts needs --upload-window", command: command)
        }
        hooks = HookRunner.Commands(
            onSuccess: try DaemonCommand.hookCommand(arguments, "on-success", command: command),
            onFailure: try DaemonCommand.hookCommand(arguments, "on-failure", command: command),
            timeoutSeconds: try DaemonCommand.hookTimeout.value(in: arguments))
        hookWithheldVariables = Set(arguments.values("header-env") + AWSCredentials.environmentVariables + [RecycleHandoff.variable])
        metricsPath = arguments.value("metrics-file")
        if metricsPath?.isEmpty == true { throw ArgumentError("--metrics-file needs a path", command: command) }
        sizeLimit = try DaemonCommand.sizeLimit(arguments, command: command)
        if drain && arguments.flag("progress") && arguments.flag("no-progress") {
            throw ArgumentError("--progress and --no-progress contradict each other", command: command)
        }
        progress = drain && (arguments.flag("progress") || (!arguments.flag("no-progress") && isatty(2) == 1))
    }

    static func hookCommand(_ arguments: ParsedArguments, _ option: String, command: String) throws -> String? {
        guard let text = arguments.value(option) else { return nil }
        guard text.contains(where: { !$0.isWhitespace }), !text.utf8.contains(0) else {
            throw ArgumentError("--\(option) needs a shell command", command: command)
        }
        return text
    }

    /// `--limit-rate`: one rate (the project's size syntax) or a timetable of them; nil for none
    /// (not given, or `off`).
    static func limitRate(_ arguments: ParsedArguments, command: String) throws -> RateTimetable? {
        guard let text = arguments.value("limit-rate") else { return nil }
        let timetable: RateTimetable
        do {
            timetable = try RateTimetable.parse(text) { try arguments.bytes($0, of: "limit-rate") }
        } catch let error as ScheduleSyntaxError {
            throw ArgumentError("--limit-rate: \(error)", command: command)
        }
        return timetable.schedule.isConstant && timetable.schedule.entries[0].value == nil ? nil : timetable
    }

    /// `--upload-window`, every window of every value; nil when not given.
    static func uploadWindows(_ arguments: ParsedArguments, command: String) throws -> UploadWindows? {
        let texts = arguments.values("upload-window")
        guard !texts.isEmpty else { return nil }
        do {
            return try UploadWindows.parse(texts)
        } catch let error as ScheduleSyntaxError {
            throw ArgumentError("--upload-window: \(error)", command: command)
        }
    }

    static func sizeLimit(_ arguments: ParsedArguments, command: String) throws -> SpoolSizeLimit? {
        let mode = arguments.value("when-full")
        let bytes = try CommonOptions.maximumSpoolSize(arguments)
        let items = try CommonOptions.maximumItems(arguments)
        guard bytes != nil || items != nil else {
            if mode != nil { throw ArgumentError("--when-full needs --max-spool-size or --max-items", command: command) }
            return nil
        }
        guard let whenFull = SpoolSizeLimit.WhenFull(rawValue: mode ?? SpoolSizeLimit.WhenFull.block.rawValue) else {
            throw ArgumentError("--when-full must be block or drop-oldest, not '\(mode!)'", command: command)
        }
        return SpoolSizeLimit(bytes: bytes, items: items, whenFull: whenFull)
    }

    static func formField(_ arguments: ParsedArguments, command: String) throws -> String? {
        guard let field = arguments.value("form") else { return nil }
        guard !field.isEmpty, !field.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 }) else {
            throw ArgumentError("--form needs a field name without control characters", command: command)
        }
        return field
    }

    static func compression(_ arguments: ParsedArguments, command: String) throws -> ContentCoding? {
        guard let text = arguments.value("compress") else { return nil }
        if let coding = ContentCoding(rawValue: text.lowercased()) { return coding }
        let why = text.lowercased() == "zstd"
            ? " (this build has no zstd: see docs/http.md 'Compression')" : ""
        throw ArgumentError("--compress '\(text)' is not supported\(why) (use: \(ContentCoding.allCases.map(\.rawValue).joined(separator: ", ")))", command: command)
    }

    static func contentDigest(_ arguments: ParsedArguments, command: String) throws -> ContentDigest? {
        guard let text = arguments.value("content-digest") else { return nil }
        guard let algorithm = ContentDigest(rawValue: text.lowercased()) else {
            let known = ContentDigest.allCases.map(\.rawValue).joined(separator: ", ")
            throw ArgumentError("--content-digest '\(text)' is not supported (use: \(known))", command: command)
        }
        return algorithm
    }

    static func outcomeRules(_ arguments: ParsedArguments, command: String) throws -> OutcomeRules {
        func list(_ option: String) throws -> StatusList {
            do {
                return try StatusList.parse(arguments.values(option))
            } catch {
                throw ArgumentError("--\(option): \(error)", command: command)
            }
        }
        var successJSON: JSONSuccessRule?
        if let text = arguments.value("success-json") {
            do {
                successJSON = try JSONSuccessRule.parse(text)
            } catch {
                throw ArgumentError("--success-json \(error)", command: command)
            }
        }
        let rules = OutcomeRules(retryOn: try list("retry-on"), finalOn: try list("final-on"), successJSON: successJSON)
        let both = rules.conflictingStatuses
        guard both.isEmpty else {
            throw ArgumentError(
                "--retry-on and --final-on both name \(both.map(String.init).joined(separator: ",")): a status has one class",
                command: command)
        }
        return rules
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
        var inherited = ProcessImage.inheritedDescriptors()
        var log = context.log
        if verbose { log.minimumLevel = .debug }
        if progress { log.linePrefix = DrainProgress.redrawPrefix }
        // The secrets were read by `init`: from here on, no core dump and no /proc/PID/ for others.
        if holdsSecrets {
            do { try ProcessImage.forbidCoreDumps() } catch { log.warning("cannot turn core dumps off (they would hold the secrets): \(error)") }
        }
        var handoff = context.environment[RecycleHandoff.variable].flatMap(RecycleHandoff.init(parsing:))
        // The first items in line, as the last image knew them: the start sends them at once.
        var line: RecycleLine?
        if let fd = handoff?.lineDescriptor, let file = ProcessImage.takeHandedFile(fd, named: RecycleLine.fileName, limit: RecycleLine.maximumBytes) {
            inherited.remove(fd)
            if case .read(let bytes) = file { line = RecycleLine(parsing: bytes) }
            if line == nil { log.warning("the line the last image handed on cannot be read; reading pending/ for it") }
            // The runs it handed on are the engine's to read (or close), not descriptors to pass on.
            for run in line?.runs?.runs ?? [] { inherited.remove(run.descriptor) }
        }
        let spool = try Spool(path: spoolPath)
        spool.takesHardLinkedFiles = allowHardLinks
        let lock = try SpoolLock(spool: spool, inherited: handoff.map { FileDescriptor(rawValue: $0.lockDescriptor) })
        // Markers left by a daemon that died mid-outage (or full) say nothing about now.
        OutageMarker.remove(in: spool)
        IntakeMarker.remove(in: spool)
        SpoolFullMarker.remove(in: spool)
        ThrottleMarker.remove(in: spool)
        WindowMarker.remove(in: spool)
        QueueCountsFile.remove(in: spool)
        defer {
            OutageMarker.remove(in: spool)
            IntakeMarker.remove(in: spool)
            SpoolFullMarker.remove(in: spool)
            ThrottleMarker.remove(in: spool)
            WindowMarker.remove(in: spool)
            QueueCountsFile.remove(in: spool)
        }
        if let s3, handoff == nil { log.info(s3.description) }
        if handoff == nil {
            for file in secretFiles {
                if let warning = CredentialHeaders.fileWarning(file) { log.warning(warning) }
            }
            if let certificate = curl?.clientCertificate, let warning = ClientCertificateFiles.datesWarning(certificate: certificate) {
                log.warning(warning)
            }
        }
        while true {
            // One request rate for the items the engine starts and the parts the transport sends.
            let pacer = RequestPacer(settings: .init(maximumPauseSeconds: configuration.policy.maximumBackoffSeconds))
            let transport = makeTransport(context: context, log: log, pacer: pacer)
            let hookRunner = hooks.isEmpty
                ? nil : HookRunner(hooks, spoolPath: spool.path, log: log, withholding: hookWithheldVariables)
            var configuration = configuration
            // The reference memory of the first image holds for the whole run.
            if let reference = handoff?.referenceKiB {
                configuration.recycle = RecycleTrigger(
                    maximumRequests: configuration.recycle.maximumRequests,
                    growthLimitKiB: configuration.recycle.growthLimitKiB, referenceKiB: reference)
            }
            // The last image's inotify instance: what moved in the instant between the images is
            // queued there (an item moved into pending/ by hand is adopted in line, not left to a pass).
            let events = try SystemEventSource(stopSignals: signals, adoptingWatcher: handoff?.watchDescriptor)
            if let handed = handoff?.watchDescriptor {
                if events.adoptedWatcher {
                    inherited.remove(handed)
                } else {
                    log.warning("the inotify descriptor the last image handed on is not one; watching anew (what moved meanwhile is found by the next pass)")
                }
            }
            let engine = try Engine(
                spool: spool, transport: transport, clock: context.clock, configuration: configuration, log: log,
                processTag: UInt64.random(in: 0...UInt64.max), events: events, pacer: pacer)
            if let hookRunner { engine.observers.add(hookRunner) }
            let queue = addObservers(to: engine, spool: spool, context: context, log: log)
            let startedAt = handoff?.startedAt ?? context.clock.now()
            if let handoff {
                engine.resume(from: handoff.summary, startedAt: startedAt, line: line)
                queue.resume(from: line?.figures)
                line = nil
                log.info("\(drain ? "draining" : "running") again after recycle \(handoff.generation) (pid \(getpid()))")
            } else {
                log.info("\(drain ? "draining" : "running") spool \(spool.path) to \(tusChunkSize == nil ? "" : "tus+")\(configuration.url.template)\(configuration.url.usesHost ? " ({host}: \(configuration.url.host))" : "") (\(tusChunkSize.map { "tus in requests of at most \(ByteUnits.exactText($0))" } ?? configuration.method), \(configuration.concurrency) at once, \(configuration.policy.maximumAttempts) attempts, \(curl == nil ? "urlsession" : "curl")\(configuration.compression.map { ", \($0.rawValue)" } ?? "")\(sizeSettings))")
            }
            let summary: RunSummary
            do {
                summary = try engine.run()
                transport.shutdown()
            } catch {
                transport.shutdown()
                // Exiting on an error (exit 3): no hook may outlive spoold unsupervised.
                hookRunner?.finish(waitingAtMostSeconds: 0)
                throw error
            }
            // Hooks already queued run before exit or a recycle, each bounded by its timeout; the
            // wait as a whole is bounded too (what is left is killed or skipped, and logged).
            hookRunner?.finish(waitingAtMostSeconds: hooks.timeoutSeconds + hooks.killGraceSeconds + 5)
            if summary.stop == .recycle {
                var next = RecycleHandoff(
                    lockDescriptor: lock.descriptor.rawValue, generation: (handoff?.generation ?? 0) + 1,
                    startedAt: startedAt, summary: summary, referenceKiB: engine.recycleReferenceKiB)
                next.watchDescriptor = events.watcherDescriptor
                var handed = engine.lineForNextImage
                handed?.figures = queue.figuresForNextImage
                do {
                    if let handed { next.lineDescriptor = try ProcessImage.handOverFile(named: RecycleLine.fileName, bytes: handed.encoded) }
                } catch {
                    log.warning("cannot hand the first items in line to the next image (\(error)); it reads pending/ for them")
                }
                // The runs' descriptors go with the line (without it, the exec closes them).
                let handedRuns = next.lineDescriptor == nil ? [] : (handed?.runs?.runs.map(\.descriptor) ?? [])
                recycle(next, requests: engine.requestsStarted, reason: engine.recycleReason, keep: inherited.union(handedRuns), log: log)
                // Only if execve failed: carry on in this process (its next engine watches anew).
                if let fd = next.lineDescriptor { ProcessImage.withdrawHandedFile(fd) }
                (next.lineDescriptor, next.watchDescriptor) = (nil, nil)
                (handoff, line) = (next, handed)
                continue
            }
            // The lock is held until what is left has been counted.
            defer { withExtendedLifetime((lock, signals)) {} }
            return try finish(summary, spool: spool, log: log)
        }
    }

    /// The size options as they were read (`, --max-spool-size 500 MiB, --limit-rate 2 MiB/s`), and
    /// the upload windows, for the start-up line: each size is said back exactly, so a unit read
    /// otherwise than meant shows.
    var sizeSettings: String {
        var settings: [String] = []
        if let sizeLimit {
            let when = sizeLimit.whenFull == .block ? "" : " (\(sizeLimit.whenFull.rawValue))"
            if let bytes = sizeLimit.bytes { settings.append("--max-spool-size \(ByteUnits.exactText(bytes))" + when) }
            if let items = sizeLimit.items { settings.append("--max-items \(items)" + (sizeLimit.bytes == nil ? when : "")) }
        }
        if let limitRate { settings.append("--limit-rate \(limitRate.text { ByteUnits.exactText($0) + "/s" })") }
        if let windows = configuration.uploadWindows {
            settings.append("--upload-window \(windows.text)" + (configuration.windowCuts ? " (--window-cuts)" : ""))
        }
        return settings.map { ", " + $0 }.joined()
    }

    /// The HTTP transport (URLSession, or libcurl with `--transport curl`), wrapped by the S3
    /// signer with `--url s3://...`.
    func makeTransport(context: CommandContext, log: EventLog, pacer: RequestPacer) -> any UploadTransport {
        let http: any UploadTransport
        // Multipart S3 uploads send several parts per item at once, over the same connections.
        let connections = s3 == nil ? configuration.concurrency : S3SigningTransport.connections(forConcurrency: configuration.concurrency)
        // One bucket for every body the daemon sends, whichever transport, at the rate in force
        // (the timetable read in local time).
        let rate = limitRate.map { BodyRateGate(rate: SendRate(timetable: $0, zone: configuration.zone)) }
        if let curl {
            http = CurlTransport(
                deadlineSeconds: timeout, idleSeconds: idleTimeout, redirects: redirects,
                answerLimit: configuration.outcomeRules.answerBytesNeeded, connections: connections, options: curl, rate: rate)
        } else {
            http = URLSessionTransport(
                concurrency: connections, deadlineSeconds: timeout, idleSeconds: idleTimeout,
                redirects: redirects, answerLimit: configuration.outcomeRules.answerBytesNeeded, rate: rate)
        }
        if let tusChunkSize {
            // Each tus request is one attempt of the HTTP transport; the operator's headers also go
            // with the requests of no item (OPTIONS and DELETE of a termination owed).
            let settings = TusTransport.Settings(
                chunkSize: tusChunkSize, allowedHosts: redirects.allowedHosts,
                headers: configuration.headers.merging(configuration.credentialHeaders) { $1 }, terminationDeadlineSeconds: min(timeout, 30))
            return TusTransport(wrapping: http, settings: settings, clock: context.clock, pacer: pacer) { endpoint, offered in
                log.info("tus server at \(endpoint) offers: \(offered.summary)")  // redacted by EventLog
            }
        }
        // S3 signs each attempt (each multipart step), then hands it to the HTTP transport.
        return s3.map {
            S3SigningTransport(
                wrapping: http, signer: $0.signer, clock: context.clock,
                multipart: .init(
                    partSize: $0.partSize, concurrency: configuration.concurrency, deadlineSeconds: timeout),
                rereadCredentials: $0.credentialsRereader(log: log), pacer: pacer)
        } ?? http
    }

    /// What watches the engine without steering it (metrics, systemd, progress, the counts for
    /// `status`) and the size limit's gate. Made anew with each engine, so after a recycle the
    /// metrics' counters restart.
    /// Returns the queue's sums, which a recycle hands on.
    @discardableResult
    func addObservers(to engine: Engine, spool: Spool, context: CommandContext, log: EventLog) -> QueueBytes {
        let queue = QueueBytes(spool: spool)
        engine.observers.add(queue)
        engine.observers.add(QueueCountsPublisher(spool: spool, queue: queue, limit: sizeLimit, log: log))
        if progress { engine.observers.add(ProgressReporter(queue: queue)) }
        if let sizeLimit {
            let gate = SpoolSizeGate(limit: sizeLimit, queue: queue, spool: spool, log: log)
            engine.sizeGate = gate
            engine.observers.add(gate)
        }
        if let metricsPath { engine.observers.add(SpoolMetrics(spool: spool, queue: queue, path: metricsPath, log: log)) }
        if let notifier = SystemdNotifier.fromEnvironment(context.environment) { engine.observers.add(notifier) }
        return queue
    }

    /// Re-executes this program (same pid, arguments and environment, plus the handoff) to give
    /// back what URLSession keeps; the spool lock's descriptor is kept open, so the lock never
    /// lapses, and SIGTERM/SIGINT stay blocked, so one sent meanwhile waits for the new image.
    /// Returns only if execve failed.
    func recycle(
        _ handoff: RecycleHandoff, requests: Int, reason: RecycleTrigger.Reason?, keep inherited: Set<Int32>, log: EventLog
    ) {
        func mebibytes(_ kib: Int) -> String { "\(kib / 1024).\(kib % 1024 * 10 / 1024) MiB" }
        let rss = ProcessImage.residentKilobytes().map(mebibytes) ?? "unknown"
        let why = switch reason {
        case .memory(_, let reference)?: ", \(mebibytes(reference)) after warm-up, --recycle-above"
        case .requests?: ", --recycle-after"
        case nil: ""
        }
        log.info("recycling after \(requests) requests (RSS \(rss)\(why)): re-executing spoold, recycle \(handoff.generation)")
        let prefix = RecycleHandoff.variable + "="
        let environment = ProcessImage.environment().filter { !$0.hasPrefix(prefix) } + [prefix + handoff.encoded]
        let kept = inherited.union(
            [handoff.lockDescriptor] + (handoff.lineDescriptor.map { [$0] } ?? []) + (handoff.watchDescriptor.map { [$0] } ?? []))
        let error = ProcessImage.reexecute(arguments: CommandLine.arguments, environment: environment, keep: Array(kept))
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
        let left = try SpoolSummary.load(spool, now: Timestamp(millisecondsSinceEpoch: 0), sampleBudget: 0)
        let pending = left.states[.pending]?.count ?? 0
        let inflight = left.states[.inflight]?.count ?? 0
        guard pending + inflight + left.incomingFiles > 0 else { return nil }
        return "\(pending) pending, \(inflight) in flight, \(left.incomingFiles) in incoming/"
    }
}

extension RecycleHandoff {
    fileprivate init(lockDescriptor: Int32, generation: Int, startedAt: Timestamp, summary: RunSummary, referenceKiB: Int?) {
        self.init(
            lockDescriptor: lockDescriptor, generation: generation, startedAt: startedAt, ingested: summary.ingested,
            uploaded: summary.uploaded, failed: summary.failed, retried: summary.retried, referenceKiB: referenceKiB)
    }

    /// The counts of the run so far, for the next image's engine.
    fileprivate var summary: RunSummary {
        var summary = RunSummary()
        (summary.ingested, summary.uploaded, summary.failed, summary.retried) = (ingested, uploaded, failed, retried)
        return summary
    }
}
