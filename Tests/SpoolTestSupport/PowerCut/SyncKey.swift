import SpoolSystem

/// One durability call as the power-cut explorer tells them apart: where spoold asked for it and
/// what it was for (`pending` for a folder's fsync, `file` for a file's, `syncfs`).
public struct SyncKey: Hashable, Sendable, CustomStringConvertible, Comparable {
    public var site: SourceLocation
    public var target: String

    public init(site: SourceLocation, target: String) {
        self.site = site
        self.target = target
    }

    public var description: String {
        switch target {
        case "file": "\(site) fsync of a file"
        case "syncfs": "\(site) syncfs"
        case "*": "\(site) every sync"
        default: "\(site) fsync of \(target)/"
        }
    }

    public static func < (a: SyncKey, b: SyncKey) -> Bool {
        ("\(a.site.file)", a.site.line, a.target) < ("\(b.site.file)", b.site.line, b.target)
    }
}
