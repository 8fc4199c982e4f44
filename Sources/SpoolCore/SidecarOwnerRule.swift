/// Whose sidecar may give a file its settings (`incoming/<name>.meta.json`): the file's owner's,
/// root's, or that of the user spoold runs as (the operator's own tools). Another producer's
/// sidecar beside a victim's file would otherwise send the victim's data where, and with the
/// credentials, the other producer chose.
public enum SidecarOwnerRule {
    /// Why a sidecar owned by uid `sidecar` may not speak for a file owned by uid `file`, or nil.
    public static func refusal(sidecar: UInt32, file: UInt32, daemon: UInt32) -> String? {
        guard sidecar != file, sidecar != 0, sidecar != daemon else { return nil }
        return "sidecar belongs to uid \(sidecar), the file to uid \(file): a sidecar is taken only from the file's owner "
            + "(or root, or the user spoold runs as); the file was not sent"
    }
}
