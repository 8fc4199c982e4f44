import ArgumentKit
import SpoolCore

/// spoold's manual pages: spoold(8) and one page per command, from the same specs as `--help`,
/// and spoold-spool(5), the on-disk protocol, from its section of the README (the operator
/// contract, written once). `spoold-docs` writes them; they are kept in docs/man/.
public enum Manual {
    /// The README section spoold-spool(5) is made from.
    public static let protocolHeading = "The on-disk protocol"

    public static func pages(readme: String) throws -> [ManualFormatter.Page] {
        let source = "spoold \(SpooldVersion.current)"
        var pages = ManualFormatter.pages(
            for: CLI.program, section: 8, date: SpooldVersion.date, source: source, seeAlso: [("spoold-spool", 5)])
        pages.append(try MarkdownManual.page(
            name: "spoold-spool", section: 5, summary: "the spool directory of spoold: its layout and on-disk protocol",
            markdown: MarkdownManual.section(protocolHeading, of: readme), date: SpooldVersion.date, source: source,
            seeAlso: [("spoold", 8)]))
        return pages
    }
}
