import SpoolCore
import XCTest

final class PrometheusTextTests: XCTestCase {
    func testHistogram_bucketsAreCumulativeAndEndWithInf() {
        var histogram = PrometheusText.Histogram(upperBounds: [0.1, 1])
        for value in [0.05, 0.5, 0.7, 5] { histogram.observe(value) }
        var text = PrometheusText()
        text.histogram("d", "Durations.", histogram)
        XCTAssertEqual(text.text, """
            # HELP d Durations.
            # TYPE d histogram
            d_bucket{le="0.1"} 1
            d_bucket{le="1"} 3
            d_bucket{le="+Inf"} 4
            d_sum 6.25
            d_count 4

            """)
    }

    func testLabels_areEscaped_andIntegersHaveNoFraction() {
        var text = PrometheusText()
        text.gauge("g", "G.", [([("state", "a\"b\\c\nd")], 3)])
        XCTAssertTrue(text.text.hasSuffix("g{state=\"a\\\"b\\\\c\\nd\"} 3\n"), text.text)
        XCTAssertEqual(PrometheusText.number(0.25), "0.25")
        XCTAssertEqual(PrometheusText.number(-2), "-2")
    }
}
