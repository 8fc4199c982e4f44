import Foundation
import SpoolCore
import SpoolTestSupport
import XCTest

/// A spool in a fresh temporary directory, removed when the test ends.
struct TestSpool {
    let root: String
    var path: String { root + "/spool" }
    var incoming: String { path + "/incoming" }

    /// - Parameter parent: the folder to make it in (the temporary directory when nil).
    init(_ test: XCTestCase, in parent: String? = nil) throws {
        let parent = parent.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
        root = parent.appendingPathComponent("spoold-it-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/spool/incoming", withIntermediateDirectories: true)
        let root = self.root
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: root) }
    }

    /// Drops a file the Maildir way: written under a dot-name, then renamed into incoming/.
    func drop(_ name: String, _ bytes: [UInt8]) throws {
        let tmp = incoming + "/.\(UUID().uuidString).part"
        try Data(bytes).write(to: URL(fileURLWithPath: tmp))
        try FileManager.default.moveItem(atPath: tmp, toPath: incoming + "/" + name)
    }

    func files(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path + "/" + folder)) ?? []).sorted()
    }

    /// The items' part logs in parts/ (`aborts.log`, the aborts owed, is none).
    var partLogs: [String] { files(in: "parts").filter { $0 != "aborts.log" } }

    /// The upload ids whose aborts are still owed (parts/aborts.log).
    var owedAborts: [String] {
        guard let bytes = FileManager.default.contents(atPath: path + "/parts/aborts.log") else { return [] }
        return AbortLogCodec.decode(Array(bytes)).owed.map(\.uploadID)
    }

    /// All item files in the state folders and tmp/ (incoming/ excluded).
    var itemFiles: [String] { ["pending", "inflight", "failed", "done", "tmp"].flatMap { f in files(in: f).map { "\(f)/\($0)" } } }

    func json(_ relative: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path + "/" + relative))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Rewrites the `createdAt` of a pending item's json (spoold not running), as if the item had
    /// been spooled then.
    func setCreatedAt(_ id: String, _ time: String) throws {
        let relative = "pending/\(id).a0.json"
        var object = try json(relative)
        object["createdAt"] = time
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: path + "/" + relative))
    }
}


/// Deterministic bytes for payloads, so a mismatch is reproducible: the generator's words in
/// little-endian order, the last one cut short.
///
/// Written straight into the array's storage: tests make hundreds of MiB of payloads, and a
/// debug build appending eight bytes at a time spent about a second per 10 MiB.
func payload(_ count: Int, seed: UInt64) -> [UInt8] {
    var random = SeededRandom(state: seed &+ 0x9E37_79B9_7F4A_7C15)
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        let out = UnsafeMutableRawBufferPointer(buffer)
        var offset = 0
        while offset + 8 <= count {
            out.storeBytes(of: random.next().littleEndian, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        if offset < count {
            let last = random.next().littleEndian
            withUnsafeBytes(of: last) { out.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: count - offset) }
        }
        initialized = count
    }
}

func percentDecode(_ s: String) -> String { s.removingPercentEncoding ?? s }
