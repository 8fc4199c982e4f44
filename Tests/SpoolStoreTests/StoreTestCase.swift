import SpoolStore
import SpoolTestSupport
import XCTest

/// A fresh spool for each test: `temp` holds its folder (layout created, so a test can drop files
/// into incoming/ first), `spool` is it opened on the real file system, `items` makes new items.
/// Tests that need a recording file system open the same folder again with `temp.open(fs:)`.
class StoreTestCase: XCTestCase {
    var temp: TemporarySpool!
    var spool: Spool!
    var items = TestItems()

    override func setUpWithError() throws {
        temp = try TemporarySpool()
        spool = try temp.open()
    }

    override func tearDown() {
        spool = nil
        temp.cleanUp()
    }
}
