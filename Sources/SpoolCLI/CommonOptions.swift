import ArgumentKit
import Glibc
import SpoolCore
import SpoolCurlTransport
import SpoolStore
import SpoolTransport

/// Options shared by several commands, declared once so their help reads the same everywhere.
enum CommonOptions {
    static let spool = OptionSpec(
        "spool", kind: .value, valueName: "DIR", help: "The spool directory; its layout is created on first use.",
        defaultDescription: "$SPOOLD_SPOOL, then ./spool")
    /// For inspection commands, which never create a spool (a typo must not make an empty one).
    static let existingSpool = spool.withHelp("The spool directory (it must exist).")
    /// `status` and `ls`; `check` and `show` say what theirs prints.
    static let json = OptionSpec.flag("json", help: "Print JSON instead of a table.")
    /// The operator's headers (`run`, `drain`, `purge`); `enqueue` says whose its are.
    static let header = OptionSpec(
        "header", kind: .repeatedValue, valueName: "'NAME: VALUE'",
        help: "A header sent with every request; an item's own headers win, except over a credential (Authorization, Proxy-Authorization, Cookie, X-Api-Key, X-Auth-Token).")
    /// Secret headers (`run`, `drain`, and `purge` for its tus terminations): `CredentialHeaders`.
    static let headerFile = OptionSpec(
        "header-file", kind: .repeatedValue, valueName: "FILE",
        help: "Secret headers, one 'Name: value' per line (e.g. Authorization); sent with every request, never stored or logged.")
    static let headerEnv = OptionSpec(
        "header-env", kind: .repeatedValue, valueName: "VAR",
        help: "An environment variable holding a secret 'Name: value' header; like --header-file.")
    /// The queue's limit (`run`, `drain`); `enqueue` says what it does with it.
    static let maximumSpoolSizeOption = OptionSpec(
        "max-spool-size", valueName: "BYTES",
        help: "Most disk the queue (pending and in flight) may take, counted as the blocks both files of each item take (a 16-byte item takes 8 KiB on ext4), e.g. 500M or 2G (K, M, G, T: powers of 1024, also written KiB, MiB...); the queue goes at most one item over it. See docs/operations.md 'A spool size limit'.")

    /// `--transport` and the options only libcurl has (`run`, `drain`, and `purge` for its aborts).
    static let transport = OptionSpec(
        "transport", valueName: "NAME",
        help: "What sends the requests: urlsession (Foundation) or curl (libcurl's multi interface: less CPU per request, HTTP/2, a private CA). See docs/http.md 'Transports'.",
        defaultDescription: defaultTransport, completion: .choices(["urlsession", "curl"]))
    static let defaultTransport = "urlsession"
    static let cacert = OptionSpec(
        "cacert", valueName: "FILE", help: "With --transport curl: trust the CAs in this PEM file instead of the system's (a private CA).")
    static let capath = OptionSpec(
        "capath", valueName: "DIR", help: "With --transport curl: trust the CAs in this directory of hashed certificates (c_rehash).")
    static let cert = OptionSpec(
        "cert", valueName: "FILE",
        help: "With --transport curl: the client certificate (PEM) to show servers that ask for one (mTLS); checked at start. A server that refuses it pauses uploads like an outage, counting no attempt. URLSession on Linux cannot present one. See docs/http.md 'Client certificates'.")
    static let key = OptionSpec(
        "key", valueName: "FILE", help: "With --cert: its private key (PEM, unencrypted; keep it mode 0600); without --key, the key is read from the --cert file.")
    static let http11 = OptionSpec.flag(
        "http1.1",
        help: "With --transport curl: HTTP/1.1 even where an https server offers HTTP/2 (by default the uploads share one HTTP/2 connection there). See docs/http.md 'Transports'.")

    /// `--transport` and the options only libcurl has; they are refused with URLSession rather
    /// than silently ignored (a private CA that is not used would fail every upload obscurely).
    static func curlOptions(_ arguments: ParsedArguments, command: String) throws -> CurlOptions? {
        let name = (arguments.value("transport") ?? defaultTransport).lowercased()
        guard name == "curl" || name == "urlsession" else {
            throw ArgumentError("--transport must be curl or urlsession, not '\(arguments.value("transport")!)'", command: command)
        }
        guard name == "curl" else {
            for option in ["cacert", "capath"] where arguments.value(option) != nil {
                throw ArgumentError("--\(option) needs --transport curl (URLSession cannot do it)", command: command)
            }
            for option in ["cert", "key"] where arguments.value(option) != nil {
                throw ArgumentError(
                    "--\(option) needs --transport curl: URLSession on Linux (FoundationNetworking) cannot present a client "
                        + "certificate (docs/http.md 'Client certificates')", command: command)
            }
            if arguments.flag("http1.1") { throw ArgumentError("--http1.1 needs --transport curl", command: command) }
            return nil
        }
        var options = CurlOptions(http2: !arguments.flag("http1.1"))
        if let file = arguments.value("cacert") {
            if let problem = TrustedCertificates.fileProblem(file) { throw ArgumentError("--cacert '\(file)' \(problem)", command: command) }
            options.caFile = file
        }
        if let directory = arguments.value("capath") {
            if let problem = TrustedCertificates.directoryProblem(directory) {
                throw ArgumentError("--capath '\(directory)' \(problem)", command: command)
            }
            options.caPath = directory
        }
        if let key = arguments.value("key"), arguments.value("cert") == nil {
            throw ArgumentError("--key '\(key)' needs --cert, the certificate it belongs to", command: command)
        }
        if let certificate = arguments.value("cert") {
            let key = arguments.value("key")
            if let problem = ClientCertificateFiles.problem(certificate: certificate, key: key) { throw ArgumentError(problem, command: command) }
            (options.clientCertificate, options.clientKey) = (certificate, key)
        }
        return options
    }

    static func spoolPath(_ arguments: ParsedArguments, _ context: CommandContext) -> String {
        arguments.value("spool") ?? context.environment["SPOOLD_SPOOL"].flatMap { $0.isEmpty ? nil : $0 } ?? "spool"
    }

    /// Opens the spool for a command that must not create one (inspection commands). Such a
    /// command holds no daemon lock, so its commits (`retry`, `purge`) wait for a daemon's start-up
    /// recovery and keep it out while they stage.
    static func openExisting(_ path: String) throws -> Spool {
        let spool = try Spool(path: path, create: false)
        spool.sharesStagingWithRecovery = true
        spool.mayReleaseReserve = false  // the room kept on a full disk is the daemon's
        return spool
    }

    /// `--max-spool-size` (`run`, `drain`, `enqueue`): at least one byte.
    static func maximumSpoolSize(_ arguments: ParsedArguments) throws -> Int64? {
        try arguments.bytes("max-spool-size")
    }

    /// `--max-items` (`run`, `drain`): at least one item.
    static func maximumItems(_ arguments: ParsedArguments) throws -> Int? {
        try arguments.int("max-items", range: 1...Int(Int32.max))
    }

    /// `--header 'Name: value'`, validated.
    static func headers(_ arguments: ParsedArguments, command: String) throws -> [String: String] {
        var headers: [String: String] = [:]
        for text in arguments.values("header") {
            switch HeaderRule.parse(text) {
            case .success(let field): HeaderFields.set(field.name, field.value, in: &headers)
            case .failure(let refusal):
                throw ArgumentError(
                    "invalid --header '\(LogEscaping.line(text))': \(refusal) (expected 'Name: value' with a token name, no "
                        + "control characters, and not one of " + HeaderRule.reserved.sorted().joined(separator: ", ") + ")",
                    command: command)
            }
        }
        return headers
    }
}
