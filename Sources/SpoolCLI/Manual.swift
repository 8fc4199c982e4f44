import ArgumentKit
import SpoolCore

/// spoold's manual pages: spoold(8) and one page per command, from the same specs as `--help`,
/// and spoold-spool(5), the on-disk protocol, from docs/spool.md (the operator contract, written
/// once). `spoold-docs` writes them; they are kept in docs/man/.
public enum Manual {
    /// The document spoold-spool(5) is made from, relative to the repository.
    public static let protocolDocument = "docs/spool.md"

    /// - Parameter spool: the text of `protocolDocument`.
    public static func pages(spool: String) throws -> [ManualFormatter.Page] {
        let source = "spoold \(SpooldVersion.current)"
        var pages = ManualFormatter.pages(
            for: CLI.program, section: 8, date: SpooldVersion.date, source: source, seeAlso: [("spoold-spool", 5)])
        pages.append(try MarkdownManual.page(
            name: "spoold-spool", section: 5, summary: "the spool directory of spoold: its layout and on-disk protocol",
            markdown: MarkdownManual.document(spool), date: SpooldVersion.date, source: source,
            seeAlso: [("spoold", 8)]))
        return pages
    }
}
