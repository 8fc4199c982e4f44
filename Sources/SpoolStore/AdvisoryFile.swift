import Foundation
import SpoolSystem

/// The advisory files at the spool's root that say what a daemon is doing (`outage`,
/// `size-limit`, `throttled`, `window-closed`): one line of JSON, replaced atomically (written as
/// a dot-name in `tmp/`, renamed into place), not fsynced; a daemon removes leftovers when it
/// starts and when it stops.
enum AdvisoryFile {
    /// Larger files are not read (a hand-made one cannot make `status` read without bound).
    static let maximumSize = 4096

    /// Replaces `SPOOL/<name>` with `object` as one line of JSON (sorted keys).
    static func replace(_ name: String, with object: [String: Any], in spool: Spool) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        let staging = "." + name
        let fs = spool.fs
        let tmp = spool.descriptor(.tmp)
        try? fs.remove(staging, in: tmp, isDirectory: false)
        let fd = try fs.open(staging, relativeTo: tmp, flags: [.writeOnly, .create, .exclusive], mode: 0o644)
        do {
            try fs.closing(fd) { try fs.writeAll($0, Array(data) + [0x0a], label: "tmp/\(staging)") }
            try fs.rename(staging, in: tmp, to: name, in: spool.root)
        } catch {
            // A full disk: leave no half-written scratch in tmp/ (tmp/ holds nothing of an idle spool).
            try? fs.remove(staging, in: tmp, isDirectory: false)
            throw error
        }
    }

    /// Removes `SPOOL/<name>`; a missing one is fine.
    static func remove(_ name: String, in spool: Spool) {
        try? spool.fs.remove(name, in: spool.root, isDirectory: false)
    }

    /// The JSON object in `SPOOL/<name>`, or nil when there is none or it cannot be read.
    static func read(_ name: String, in spool: Spool) -> [String: Any]? {
        let fs = spool.fs
        guard let fd = try? fs.open(name, relativeTo: spool.root, flags: [.readOnly, .nonBlocking], mode: 0),
              let bytes = try? fs.closing(fd, { try fs.readAll($0, limit: maximumSize) }) ?? nil
        else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }
}
