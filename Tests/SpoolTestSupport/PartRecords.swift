import Foundation
import SpoolCore
import SpoolEngine
import SpoolTransport

extension EmbeddedEngine {
    /// Something a test expected of the engine did not happen.
    public struct NotAnswered: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Asks for `record` through the part recorder of `request` (an upload's, as the scripted
    /// transport saw it), as its driver would, and steps the engine until it answers (at once
    /// when its syncs are made on the loop; else as the worker makes them, within 20 s).
    @discardableResult
    public func record(_ record: PartRecord, of request: UploadRequest) throws -> PartRecorded {
        guard let recorder = request.partRecorder else { throw NotAnswered(description: "\(request.id) keeps no part log") }
        let answer = AnswerBox()
        recorder.record(record) { answer.set($0) }
        let deadline = Date().addingTimeInterval(20)
        while true {
            try advanceTime(by: 0)
            if let answered = answer.value { return answered }
            guard Date() < deadline else { throw NotAnswered(description: "the engine never answered \(record)") }
            usleep(1000)
        }
    }
}

/// A driver's answer, set on whatever thread the engine answers on.
final class AnswerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var answer: PartRecorded?
    func set(_ value: PartRecorded) { lock.withLock { answer = value } }
    var value: PartRecorded? { lock.withLock { answer } }
}
