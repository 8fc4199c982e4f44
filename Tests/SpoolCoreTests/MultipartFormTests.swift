import SpoolCore
import XCTest

final class MultipartFormTests: XCTestCase {
    private func form(fields: [String: String] = [:], name: String = "photo.jpg") -> MultipartForm {
        MultipartForm(fileField: "file", fileName: name, contentType: "image/jpeg", fields: fields, randomBits: (1, 0xabc))
    }

    func testFraming_fieldsInNameOrderThenTheFilePart() {
        let f = form(fields: ["b": "2", "a": "1"])
        XCTAssertEqual(f.boundary, "spoold-00000000000000010000000000000abc")
        XCTAssertEqual(f.headerValue, "multipart/form-data; boundary=\(f.boundary)")
        let b = f.boundary
        XCTAssertEqual(String(decoding: f.preamble, as: UTF8.self),
                       "--\(b)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
                       + "--\(b)\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n2\r\n"
                       + "--\(b)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n")
        XCTAssertEqual(String(decoding: f.epilogue, as: UTF8.self), "\r\n--\(b)--\r\n")
        XCTAssertEqual(f.bodyLength(blobSize: 10), Int64(f.preamble.count + 10 + f.epilogue.count))
    }

    func testQuotesAndLineBreaksInNames_arePercentEncoded() {
        let text = String(decoding: form(fields: ["x\"y\r\nz": "v"], name: "a\"b\nc.txt").preamble, as: UTF8.self)
        XCTAssertTrue(text.contains("name=\"x%22y%0D%0Az\""), text)
        XCTAssertTrue(text.contains("filename=\"a%22b%0Ac.txt\""), text)
        XCTAssertFalse(form().fieldsContainBoundary())
    }
}
