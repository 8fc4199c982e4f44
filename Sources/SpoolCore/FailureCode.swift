/// Why an item is in `failed/`, as a code: written into its json beside the words
/// (`failureCode`, `failureReason`) and read by `spoold status`, the metrics and `FailureClass`,
/// which never parse the words. Codes are added, never renamed (the json is a public interface);
/// a code this version does not know is kept as it is and counted as `FailureClass.other`.
public enum FailureCode: String, Sendable, CaseIterable {
    /// A sidecar that could not be used (unreadable, malformed, another owner).
    case sidecar
    /// The payload was missing.
    case blobMissing = "blob_missing"
    /// The payload is not what was spooled: another size, a symlink, not a regular file, shorter
    /// than recorded while it was sent, or unreadable.
    case blobChanged = "blob_changed"
    /// The item's json could not be read, or was lost and recreated.
    case metadata
    /// Uploads of it were interrupted (the daemon stopped or crashed) once too often.
    case interrupted
    /// Its attempt count is at the largest a file name can hold.
    case attemptLimit = "attempt_limit"
    /// Its own URL is not allowed, or is not a URL spoold can send to.
    case urlRefused = "url_refused"
    /// A header it would send cannot go on the wire.
    case headerRefused = "header_refused"
    /// The server redirected it where spoold does not follow.
    case redirectRefused = "redirect_refused"
    /// A request spoold cannot make for it (an S3 abort with no S3 store configured).
    case unsupported
    /// The server refused it for good (a final status).
    case serverRefused = "server_refused"
    /// Every attempt it had ended in a retryable failure.
    case attemptsUsed = "attempts_used"
}
