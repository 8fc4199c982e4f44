import Foundation
import SpoolCore
import SpoolSystem

extension ItemMetadata {
    /// Sets the original name from a name as `FileName` carries it: as is when it is valid UTF-8,
    /// otherwise a readable form in `originalName` and the exact bytes in `originalNameBytes`.
    public mutating func setOriginalName(_ name: String) {
        originalName = FileName.display(name)
        originalNameBytes = FileName.isEscaped(name) ? Data(FileName.encode(name)).base64EncodedString() : nil
    }

    /// The original name's exact bytes: `originalNameBytes` when present (and valid base64),
    /// otherwise `originalName` in UTF-8.
    public var originalNameBytesOrUTF8: [UInt8] {
        if let encoded = originalNameBytes, let data = Data(base64Encoded: encoded) { return Array(data) }
        return Array(originalName.utf8)
    }
}
