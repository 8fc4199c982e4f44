import UploadReceiver
import XCTest

/// A fresh `UploadReceiver` on 127.0.0.1 for each test, answering 201, stopped afterwards.
class ReceiverTestCase: XCTestCase {
    var receiver: UploadReceiver!

    override func setUpWithError() throws {
        receiver = UploadReceiver()
        try receiver.start()
    }

    override func tearDown() {
        receiver.stop()
        receiver = nil
    }
}
