import SpoolCore

/// A range of ids, `[lower, upper)` by their bytes (nil: open), for reading a spool a slice at a time.
public struct IDSlice: Equatable, Sendable {
    var lower: [UInt8]?
    var upper: [UInt8]?

    public static let all = IDSlice(lower: nil, upper: nil)

    /// The first slice also reads the names that are no item's (in tmp/, in the state folders).
    var isFirst: Bool { lower == nil }

    func contains(_ id: UnsafeRawBufferPointer) -> Bool {
        if let lower, id.lexicographicallyPrecedes(lower) { return false }
        if let upper, !id.lexicographicallyPrecedes(upper) { return false }
        return true
    }

    /// Whether an id from the index falls in the slice.
    public func contains(_ id: ItemID) -> Bool {
        var text = id.rawValue
        return text.withUTF8 { contains(UnsafeRawBufferPointer($0)) }
    }
}
