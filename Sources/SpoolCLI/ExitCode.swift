/// spoold's exit codes, documented in docs/cli.md and in `spoold --help`.
public enum ExitCode: Int32, Sendable {
    /// Everything asked for was done (`drain`: every item uploaded).
    case success = 0
    /// Done, but not for everything: `drain` left items in failed/, `enqueue` skipped a file,
    /// `show`/`retry`/`purge` did not find an id.
    case partial = 1
    /// The command line is wrong; nothing was done.
    case usage = 2
    /// The spool could not be used or a write could not be made durable (I/O error, disk full).
    case failure = 3
    /// Another spoold daemon already works on this spool.
    case locked = 4
    /// `drain` was stopped (SIGTERM/SIGINT or `--max-time`) before everything was uploaded; what
    /// is left stays in the spool, nothing is lost.
    case stopped = 5
    /// `enqueue --max-spool-size`: the queue is at its limit; the files not printed were not
    /// added (EX_TEMPFAIL from sysexits.h: try again later).
    case spoolFull = 75
}
