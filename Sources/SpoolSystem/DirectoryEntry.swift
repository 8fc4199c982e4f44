/// One name read from a directory, with the type `readdir` reported (`.unknown` on some file systems).
public struct DirectoryEntry: Equatable, Sendable {
    public var name: String
    public var type: FileStatus.FileType

    public init(name: String, type: FileStatus.FileType) {
        self.name = name
        self.type = type
    }
}
