/// The command line of `spoold-receiver`, parsed by hand (no argument-parsing package).
struct ReceiverOptions: Equatable {
    static let usage = """
        usage: spoold-receiver [--port N] [--store DIR] [--status CODE] [--fail-first N] [--throttle N] [--quiet]

        A small HTTP receiver on 127.0.0.1 for testing and trying spoold, not for production.
        It accepts uploads (PUT/POST, Content-Length or chunked), answers them, and logs one
        line per request. A gzip body (Content-Encoding: gzip) is inflated and checked: the
        content is what is stored, and a body that is not whole gzip is answered 400.

          --port N        port to listen on (default 8765; 0 picks a free port)
          --store DIR     write each body answered 2xx to DIR/<n>-<name> (created if missing);
                          bodies are not kept in memory
          --status CODE   status for every request, 200-599 (default 201)
          --fail-first N  answer 500 to the first N requests of each Idempotency-Key
                          (requests without the header share one count)
          --throttle N    accept at most N requests a second (a bucket of N/10) and answer
                          the rest 503 with S3's SlowDown error, as S3 does past a prefix's
                          request rate; the count is printed when it stops
          --quiet         do not log requests
          --help          show this help

        The first line on stdout is "spoold-receiver: listening on http://127.0.0.1:PORT/ ...".
        Stop it with Ctrl-C (SIGINT) or SIGTERM.
        """

    /// What the command line asks for.
    enum Action: Equatable {
        case serve(ReceiverOptions)
        case showHelp
    }

    /// A usage error, reported with the usage hint and exit status 2.
    struct UsageError: Error, Equatable {
        var message: String
    }

    var port: UInt16 = 8765
    var storeDirectory: String?
    var status = 201
    var failFirst = 0
    /// Requests a second accepted (`--throttle`); 0 accepts all.
    var throttle = 0
    var quiet = false

    /// Parses the arguments after the program name; `--name value` and `--name=value` both work.
    static func parse(_ arguments: [String]) throws(UsageError) -> Action {
        var options = ReceiverOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst() else { throw UsageError(message: "\(name) needs a value") }
                return next
            }
            func flag() throws(UsageError) {
                if inlineValue != nil { throw UsageError(message: "\(name) takes no value") }
            }
            switch name {
            case "--help", "-h":
                return .showHelp
            case "--port":
                let text = try value()
                guard let port = UInt16(text) else { throw UsageError(message: "--port must be 0-65535, not '\(text)'") }
                options.port = port
            case "--store":
                let directory = try value()
                guard !directory.isEmpty else { throw UsageError(message: "--store needs a directory") }
                options.storeDirectory = directory
            case "--status":
                let text = try value()
                guard let status = Int(text), (200...599).contains(status) else {
                    throw UsageError(message: "--status must be 200-599, not '\(text)'")
                }
                options.status = status
            case "--fail-first":
                let text = try value()
                guard let count = Int(text), count >= 0 else {
                    throw UsageError(message: "--fail-first must be a whole number >= 0, not '\(text)'")
                }
                options.failFirst = count
            case "--throttle":
                let text = try value()
                guard let perSecond = Int(text), (1...1_000_000).contains(perSecond) else {
                    throw UsageError(message: "--throttle must be 1-1000000 requests a second, not '\(text)'")
                }
                options.throttle = perSecond
            case "--quiet", "-q":
                try flag()
                options.quiet = true
            default:
                throw UsageError(message: argument.hasPrefix("-") ? "unknown option \(name)" : "unexpected argument '\(argument)'")
            }
        }
        return .serve(options)
    }
}
