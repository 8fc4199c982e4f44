/// The most bytes spoold takes whole into memory of a small text another party wrote, before it
/// parses it: an item's sidecar (a producer's `incoming/NAME.meta.json`), a `--header-file` and
/// the S3 shared credentials file (the operator's), the answer body kept for `--success-json`
/// (the server's). One cap for all of them: 64 KiB is far more than any of them needs, and
/// little enough to hold for every upload in flight. A longer one is refused (the answer fails
/// its rule), never cut and parsed in part.
public enum SmallText {
    public static let maximumBytes = 64 * 1024
}
