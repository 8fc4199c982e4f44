@testable import ArgumentKit
import XCTest

final class NameSuggestionTests: XCTestCase {
    func testEditDistance_countsEachEditOnce() {
        XCTAssertEqual(NameSuggestion.editDistance("spool", "spool"), 0)
        XCTAssertEqual(NameSuggestion.editDistance("spoo", "spool"), 1)
        XCTAssertEqual(NameSuggestion.editDistance("spxol", "spool"), 1)
        XCTAssertEqual(NameSuggestion.editDistance("sopol", "spool"), 1, "a swap of neighbours is one edit")
        XCTAssertEqual(NameSuggestion.editDistance("", "abc"), 3)
        XCTAssertEqual(NameSuggestion.editDistance("abc", ""), 3)
        XCTAssertEqual(NameSuggestion.editDistance("kitten", "sitting"), 3)
    }

    func testEditDistance_ignoresCaseAndCountsCharactersNotBytes() {
        XCTAssertEqual(NameSuggestion.editDistance("SPOOL", "spool"), 0)
        XCTAssertEqual(NameSuggestion.editDistance("café", "cafe"), 1)
        XCTAssertEqual(NameSuggestion.editDistance("🚀x", "x"), 1)
    }

    func testClosest_prefersTheSmallestDistanceThenDeclarationOrder() {
        XCTAssertEqual(NameSuggestion.closest(to: "spoll", among: ["spell", "spool"]), "spell")
        XCTAssertEqual(NameSuggestion.closest(to: "spoll", among: ["spool", "spell"]), "spool")
        XCTAssertEqual(NameSuggestion.closest(to: "spo", among: ["spool", "spa"]), "spa")
    }

    func testClosest_acceptsDistanceTwoButNotThree() {
        XCTAssertEqual(NameSuggestion.closest(to: "sxxol", among: ["spool"]), "spool")
        XCTAssertNil(NameSuggestion.closest(to: "sxxxl", among: ["spool"]))
    }

    func testClosest_acceptsAnyPrefix() {
        XCTAssertEqual(NameSuggestion.closest(to: "time", among: ["spool", "timeout-seconds"]), "timeout-seconds")
    }

    func testClosest_emptyTypedNameSuggestsNothing() {
        XCTAssertNil(NameSuggestion.closest(to: "", among: ["ab"]))
    }
}
