import SpoolCore
import XCTest

final class URLPathTextTests: XCTestCase {
    func testDisplay_isThePathDecoded_withoutHostQueryOrFragment() {
        XCTAssertEqual(URLPathText.display("http://127.0.0.1:8080/up/cam7/fox.jpg"), "/up/cam7/fox.jpg")
        XCTAssertEqual(URLPathText.display("https://h/up/Gr%C3%BC%C3%9Fe%20%E2%80%93.txt"), "/up/Grüße –.txt")
        XCTAssertEqual(URLPathText.display("https://bucket.s3.amazonaws.com/k/v.bin?X-Amz-Signature=secret"), "/k/v.bin")
        XCTAssertEqual(URLPathText.display("http://127.0.0.1:9000/bucket/k/v.bin#part"), "/bucket/k/v.bin")
        XCTAssertEqual(URLPathText.display("https://example.org"), "/")
    }

    func testDisplay_escapesControlCharacters_andKeepsBytesThatAreNotText() {
        XCTAssertEqual(URLPathText.display("http://h/a%0Ab%1B.txt"), "/a\\nb\\x1b.txt")
        XCTAssertEqual(URLPathText.display("http://h/caf%E9.txt"), "/caf%E9.txt", "Latin-1: shown as sent")
        XCTAssertEqual(URLPathText.display("http://h/100%.txt"), "/100%.txt", "a malformed escape: as sent")
    }
}
