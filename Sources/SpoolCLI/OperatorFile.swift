import Foundation
import SpoolCore

/// A small text file the operator points spoold at (`--header-file`, the S3 shared credentials
/// file), read whole at start-up with the cap on small texts (`SmallText`); each caller says
/// what went wrong in its own words.
enum OperatorFile {
    enum Read: Equatable {
        case text(String)
        case unreadable
        case tooLarge
        case notUTF8
    }

    static func read(_ path: String) -> Read {
        guard let handle = FileHandle(forReadingAtPath: path) else { return .unreadable }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: SmallText.maximumBytes + 1)) ?? Data()
        guard data.count <= SmallText.maximumBytes else { return .tooLarge }
        guard let text = String(data: data, encoding: .utf8) else { return .notUTF8 }
        return .text(text)
    }
}
