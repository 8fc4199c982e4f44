import ArgumentKit
import SpoolCore
import SpoolCurlTransport
import SpoolStore
import SpoolTransport

/// `spoold purge (ID... | --failed)`: delete items for good.
struct PurgeCommand: SpooldCommand {
    static let spec = CommandSpec(
        name: "purge",
        abstract: "Delete items for good.",
        discussion: """
        Items being uploaded (inflight/) are refused while a daemon runs; stop it first.
        An item with an S3 multipart upload in progress has it aborted (AbortMultipartUpload,
        signed with the credentials from the environment, up to \(S3UploadAbort.concurrency) at once, at most \(Int(abortSeconds)) s each);
        the item is purged whether or not the store answers, and an abort it did not confirm
        stays owed in SPOOL/parts/aborts.log for the daemon to send at its next start. An item
        with a tus upload has it terminated (DELETE of its upload URL, at most 10 s) when the
        server offers termination (asked with OPTIONS first); a termination not confirmed stays
        owed the same way. Give purge the daemon's --header, --header-file and --header-env for
        a tus server that wants credentials (they go with the tus requests only; S3 aborts are
        signed). For a server behind a private CA, give the daemon's --transport curl
        --cacert FILE (or --capath DIR), and its --cert FILE and --key FILE for one that wants
        a client certificate.
        Exit codes: 0 all purged, 1 some ids were not found or refused, 2 usage error.
        """,
        options: [
            CommonOptions.existingSpool, .flag("failed", help: "Purge every item in failed/."),
            CommonOptions.transport, CommonOptions.cacert, CommonOptions.capath, CommonOptions.cert, CommonOptions.key,
            CommonOptions.http11,
            CommonOptions.header.withHelp("A header sent with the tus OPTIONS and DELETE, as the daemon sends it with its uploads (S3 aborts are signed instead)."),
            CommonOptions.headerFile, CommonOptions.headerEnv,
        ],
        positionals: [PositionalSpec("ID", help: "Item ids (or unique prefixes).", repeating: true, optional: true)])

    /// Each abort's deadline, as the help says.
    static let abortSeconds = 10.0

    var spoolPath: String
    var ids: [String]
    var failed: Bool
    /// `--transport curl` and its TLS options, for the aborts; nil: URLSession.
    var curl: CurlOptions?
    /// The operator's headers (`--header`, and the secret ones), for the tus terminations.
    var headers: [String: String]
    /// `--header-file`: warned about, as the daemon does, when others may read or change one.
    var headerFiles: [String]

    init(_ arguments: ParsedArguments, context: CommandContext) throws {
        spoolPath = CommonOptions.spoolPath(arguments, context)
        ids = arguments.positionals
        failed = arguments.flag("failed")
        curl = try CommonOptions.curlOptions(arguments, command: "purge")
        headerFiles = arguments.values("header-file")
        headers = try CommonOptions.headers(arguments, command: "purge")
            .merging(CredentialHeaders.load(arguments, environment: context.environment, command: "purge")) { $1 }
        guard failed != !ids.isEmpty else {
            throw ArgumentError(failed ? "give either ids or --failed, not both" : "give the ids to purge, or --failed", command: "purge")
        }
    }

    func run(context: CommandContext) throws -> ExitCode {
        let spool = try CommonOptions.openExisting(spoolPath)
        for file in headerFiles {
            if let warning = CredentialHeaders.fileWarning(file) { context.complain("purge: warning: \(warning)") }
        }
        if failed {
            return try ItemSelection.forEachFailedBatch(in: spool) { selection in
                try purge(&selection, spool: spool, context: context)
            }
        }
        let inventory = try SpoolInventory.load(spool, states: ItemState.allCases, wanted: SpoolInventory.matchingAny(of: ids))
        let daemon = SpoolLock.holder(of: spool)
        var selection = ItemSelection(ids: ids, in: inventory, context: context) { item in
            guard item.location.state == .inflight, let pid = daemon else { return nil }
            return "\(item.id) is being uploaded by spoold (pid \(pid)); stop it first"
        }
        return try purge(&selection, spool: spool, context: context)
    }

    /// Purges the selected items in one commit, their multipart uploads' aborts owed first.
    private func purge(_ selection: inout ItemSelection, spool: Spool, context: CommandContext) throws -> ExitCode {
        let now = context.clock.now()
        let transitions = selection.items.map {
            SpoolTransition(ItemLifecycle(location: $0.location, notBefore: now).purge().record(for: $0.id))
        }
        // Before the items go: their uploads' aborts are owed (recorded) while their logs go, so
        // a crash in between leaves an abort to send, never an upload nothing names.
        let (owed, unrecorded) = try spool.giveUpMultipartUploads(of: selection.items.map(\.id), now: now)
        for (id, why) in unrecorded {
            context.complain("\(id): its multipart upload cannot be recorded for an abort (\(why)); a lifecycle rule cleans it up (docs/s3.md)")
        }
        let code = try selection.commit(transitions, on: spool, verb: "purged", context: context)
        abortMultipartUploads(owed.filter { $0.kind == .s3Multipart }, spool: spool, context: context)
        terminateTusUploads(owed.filter { $0.kind == .tusTermination }, spool: spool, context: context)
        for (id, _) in unrecorded { spool.partLogs.remove(id) }
        return code
    }

    /// Sends the owed tus terminations (an OPTIONS, then a DELETE where the server offers
    /// termination; each bounded); those confirmed are recorded as done, the others stay owed.
    private func terminateTusUploads(_ owed: [OwedAbort], spool: Spool, context: CommandContext) {
        guard !owed.isEmpty else { return }
        let transport = endingTransport(for: owed.count)
        defer { (transport as? CurlTransport)?.shutdown() }
        let confirmed = TusTransport.terminate(owed, headers: headers, transport: transport, clock: context.clock, timeoutSeconds: PurgeCommand.abortSeconds)
        for (termination, ok) in zip(owed, confirmed) {
            if ok {
                try? spool.partLogs.aborts.confirmed(termination.uploadID)
            } else {
                context.complain("\(termination.id): the tus server did not confirm terminating its upload \(termination.uploadID); it stays owed (SPOOL/parts/\(AbortLog.fileName)) and the daemon sends it at its next start")
            }
        }
    }

    /// The transport that ends `count` uploads (aborts, terminations): the one `--transport`
    /// names, each request bounded by `abortSeconds`, up to `S3UploadAbort.concurrency` at once.
    private func endingTransport(for count: Int) -> any UploadTransport {
        let timeout = PurgeCommand.abortSeconds
        if let curl {
            return CurlTransport(deadlineSeconds: timeout, idleSeconds: timeout, connections: S3UploadAbort.concurrency, options: curl)
        }
        return S3UploadAbort.urlSessionTransport(for: count, timeoutSeconds: timeout)
    }

    /// Sends the owed aborts (several at once, each bounded); those the store confirms are
    /// recorded as done, the others stay owed for the daemon's next start.
    private func abortMultipartUploads(_ owed: [OwedAbort], spool: Spool, context: CommandContext) {
        guard !owed.isEmpty else { return }
        guard let (credentials, _) = try? S3Options.credentials(environment: context.environment, command: "purge") else {
            for abort in owed {
                context.complain("\(abort.id): no S3 credentials to abort its multipart upload \(abort.uploadID); it stays owed (SPOOL/parts/\(AbortLog.fileName)) and the daemon sends it at its next start")
            }
            return
        }
        let uploads = owed.map { abort in
            S3UploadAbort.Upload(
                uploadID: abort.uploadID, url: abort.url, id: abort.id, signer: SigV4Signer(credentials: credentials, region: abort.region))
        }
        let transport = endingTransport(for: uploads.count)
        defer { (transport as? CurlTransport)?.shutdown() }
        let confirmed = S3UploadAbort.abort(uploads, transport: transport, clock: context.clock, timeoutSeconds: PurgeCommand.abortSeconds)
        for (upload, ok) in zip(uploads, confirmed) {
            if ok {
                try? spool.partLogs.aborts.confirmed(upload.uploadID)
            } else {
                context.complain("\(upload.id): the store did not confirm aborting its multipart upload \(upload.uploadID); it stays owed (SPOOL/parts/\(AbortLog.fileName)) and the daemon sends it at its next start")
            }
        }
    }
}
