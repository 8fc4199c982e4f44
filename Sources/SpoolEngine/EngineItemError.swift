/// Why one item cannot be uploaded; never stops the daemon.
struct EngineItemError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
