import Foundation
import SpoolCore
import SpoolSystem
import SpoolTransport
import UploadReceiver
import XCTest

/// `--compress gzip`'s body, made while it is read (`GzipStream` inside `BodyReader`): measured in
/// a first pass, the same bytes however it is read, a whole gzip file of the content.
final class CompressedBodyTests: XCTestCase {
    private func blob(_ bytes: [UInt8], recorded: Int64? = nil) throws -> BlobBody { try BodyFixtures.blob(bytes, recorded: recorded) }

    private func readAll(_ reader: BodyReader, piece: Int) -> [UInt8]? { BodyFixtures.readAll(reader, piece: piece) }

    /// Lines of a log: compressible, and longer than a few of GzipStream's 64 KiB steps.
    private func logLines(_ count: Int) -> [UInt8] {
        var text = ""
        for line in 0..<count { text += "2026-11-26T10:\(line % 60):00Z sensor-\(line % 97) temperature=\(line % 41).\(line % 10) ok\n" }
        return Array(text.utf8)
    }

    func testCodedBody_measuredFirst_readsTheSameInAnyPieceSize_fromAnyPosition_andInflatesToTheContent() throws {
        let content = logLines(20000)
        let blob = try blob(content)
        var request = UploadRequest(
            id: ItemID("20261126T101010000Z-0000-abcdef01-a.log")!, attempt: 1, url: "http://127.0.0.1:9/up/a.log",
            method: "PUT", body: blob, contentType: "text/plain", headers: [:],
            form: MultipartForm(fileField: "file", fileName: "a.log", contentType: "text/plain", fields: [:], randomBits: (1, 2)))
        request.compression = .gzip
        request.contentDigest = .sha256
        XCTAssertTrue(request.needsMeasuring)
        let (prepared, digest) = try request.prepared()
        let body = try XCTUnwrap(prepared.requestBody)
        XCTAssertFalse(prepared.needsMeasuring)
        XCTAssertEqual(body.coding, .gzip)
        let framed = Array(request.form!.preamble) + content + Array(request.form!.epilogue)
        XCTAssertLessThan(body.length, Int64(framed.count) / 4, "log lines shrink")

        let wire = try XCTUnwrap(readAll(BodyReader(body), piece: 4096))
        XCTAssertEqual(Int64(wire.count), body.length)
        XCTAssertEqual(GzipInflater.inflate(wire), framed, "the whole body, frame included, is one gzip file of it")
        XCTAssertEqual(digest, ContentDigest.sha256.headerValue(digest: SHA256.hash(wire)), "Content-Digest covers the bytes on the wire")
        for piece in [1, 7, 1000, 65536, 200_000] {
            XCTAssertEqual(readAll(BodyReader(body), piece: piece), wire, "pieces of \(piece)")
        }
        for position in [0, 1, 9, wire.count / 2, wire.count - 1, wire.count] {
            let reader = BodyReader(body)
            _ = readAll(reader, piece: 333)
            guard reader.seek(to: Int64(position)) else { XCTFail("seek to \(position) of \(wire.count)"); continue }
            XCTAssertEqual(readAll(reader, piece: 5000), Array(wire[position...]), "again from \(position)")
        }
    }

    /// A coded form that comes out another length than measured (the content changed in place)
    /// is not sent short or long: the read fails, and the blob says why.
    func testCodedBody_ofAnotherLengthThanMeasured_failsTheRead_withTheReason() throws {
        let content = logLines(3000)
        let longer = try blob(content)
        let body = RequestBody([.blob(longer, offset: 0, length: Int64(content.count))], coding: .gzip, length: 1)
        XCTAssertNil(readAll(BodyReader(body), piece: 4096))
        XCTAssertEqual(
            longer.failure, "its payload changed while it was sent: its gzip form came out longer than the 1 B measured before sending")
        let shorter = try blob(content)
        XCTAssertNil(readAll(BodyReader(RequestBody([.blob(shorter, offset: 0, length: Int64(content.count))], coding: .gzip, length: 1 << 30)), piece: 4096))
        XCTAssertTrue(shorter.failure?.contains("came out shorter") == true, shorter.failure ?? "")
    }

    /// An S3 part that compresses below S3's smallest part is padded with an empty member of
    /// empty stored blocks: at least as long as asked, and it inflates to the same content.
    func testPadding_makesASmallPartLongEnough_andInflatesToNothingMore() throws {
        let content = logLines(500)
        var request = UploadRequest(
            id: ItemID("20261126T101010000Z-0000-abcdef01-b.log")!, attempt: 1, url: "http://127.0.0.1:9/b", method: "PUT",
            body: try blob(content), contentType: "text/plain", headers: [:])
        request.compression = .gzip
        let unpadded = try request.prepared().request.codedLength!
        request.codedMinimum = 100_003
        let padded = try request.prepared().request
        XCTAssertGreaterThanOrEqual(padded.codedLength!, 100_003)
        XCTAssertLessThan(padded.codedLength!, 100_003 + 5)
        let wire = try XCTUnwrap(readAll(BodyReader(padded.requestBody!), piece: 8192))
        XCTAssertEqual(Int64(wire.count), padded.codedLength)
        XCTAssertGreaterThan(padded.codedLength!, unpadded)
        XCTAssertEqual(GzipInflater.inflate(wire), content)
    }
}
