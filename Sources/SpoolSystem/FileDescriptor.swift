/// An open file or directory descriptor. Closing is explicit (`FileSystem.close`).
public struct FileDescriptor: Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
}
