/// What spoold warns about a file it reads secrets from (`--header-file`, the shared AWS
/// credentials file), as found when it was read (the file itself, a symlink followed): readable
/// or writable by other users, or owned by a user other than spoold's own (or root), who then
/// chooses the credentials spoold signs with. A warning, not a refusal: the file is the
/// operator's to place.
public enum SecretFileRule {
    /// Why the file is not private to the user spoold runs as (uid `user`), or nil.
    public static func warning(owner: UInt32, permissions: UInt32, user: UInt32) -> String? {
        var problems: [String] = []
        if owner != user && owner != 0 {
            problems.append("it belongs to uid \(owner), not to the user spoold runs as (uid \(user)), who can change it")
        }
        let (readable, writable) = (permissions & 0o044 != 0, permissions & 0o022 != 0)
        if readable || writable {
            let mode = String(permissions & 0o7777, radix: 8)
            let what = readable && writable ? "read and change it" : readable ? "read it" : "change it"
            problems.append("its mode \(String(repeating: "0", count: max(0, 4 - mode.count)) + mode) lets other users \(what)")
        }
        guard !problems.isEmpty else { return nil }
        return problems.joined(separator: "; ") + " (chmod 600, chown to spoold's user)"
    }
}
