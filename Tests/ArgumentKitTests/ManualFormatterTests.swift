@testable import ArgumentKit
import XCTest

final class ManualFormatterTests: XCTestCase {
    private let program = ProgramSpec(
        name: "p", summary: "a tool", abstract: "p: does things.", commands: [enqueueSpec, statusSpec],
        options: [.flag("version", help: "Print the version.")], defaultCommand: "enqueue",
        footer: "Layout:\n  DIR/in  drop here\nExit codes: 0 ok.")

    private func page(_ name: String) throws -> String {
        let pages = ManualFormatter.pages(for: program, section: 8, date: "2026-11-26", source: "p 1.0", seeAlso: [("p-files", 5)])
        return try XCTUnwrap(pages.first { $0.fileName == name }?.text, "\(pages.map(\.fileName))")
    }

    func testPages_oneForTheProgramAndOnePerCommand() {
        let pages = ManualFormatter.pages(for: program, section: 8, date: "2026-11-26", source: "p 1.0")
        XCTAssertEqual(pages.map(\.fileName), ["p.8", "p-enqueue.8", "p-status.8"])
    }

    func testProgramPage_listsCommandsOptionsAndTheFooter() throws {
        let text = try page("p.8")
        for line in [
            ".Dd November 26, 2026", ".Dt P 8", ".Nm \"p\"", ".Nd \"a tool\"", ".Nm \"p\"\n.Fl \"-version\"",
            "Does things.", "Options without a command are those of the enqueue command.",
            ".It Cm \"enqueue\"\nCopy files into the spool for upload.\nSee\n.Xr \"p-enqueue\" 8 .",
            ".Bd -literal -offset indent\n  DIR/in  drop here\n.Ed", "Exit codes: 0 ok.",
            ".Sh SEE ALSO\n.Xr \"p-files\" 5 ,\n.Xr \"p-enqueue\" 8 ,\n.Xr \"p-status\" 8\n",
        ] {
            XCTAssertTrue(text.contains(line), "lacks:\n\(line)\n--- in:\n\(text)")
        }
    }

    func testCommandPage_hasTheSynopsisArgumentsAndOptionsOfItsSpec() throws {
        let text = try page("p-enqueue.8")
        for line in [
            ".Dt P-ENQUEUE 8", ".Nd \"copy files into the spool for upload\"",
            ".Nm \"p\" Cm \"enqueue\"\n.Op Ar options\n.Ar \"FILE\" ...",
            ".It Fl \"s\" , Fl \"-spool\" Ar \"DIR\"\nThe spool directory. (default: $SPOOLD_SPOOL, then ./spool)",
            ".It Fl \"-header\" Ar \"NAME:VALUE\"\nExtra HTTP header. (repeatable)",
            ".It Fl \"v\" , Fl \"-verbose\"\nLog every step.", ".It Ar \"FILE\" ...\nA file to enqueue.",
            ".Xr \"p-files\" 5 ,\n.Xr \"p\" 8\n",
        ] {
            XCTAssertTrue(text.contains(line), "lacks:\n\(line)\n--- in:\n\(text)")
        }
    }

    func testText_isEscaped_andOneSentencePerLine() {
        var page = Mdoc()
        page.text(".hidden request\\ here. Grüße e.g. this. 2 more")
        XCTAssertEqual(page.lines, ["\\&.hidden request\\e here.", "Gr\\[u00FC]\\[u00DF]e e.g. this.", "2 more"])
        XCTAssertEqual(Mdoc.quoted("say \"hi\""), "\"say \"\"hi\"\"\"")
    }

    func testText_breaksLongSentencesBetweenWords() {
        var page = Mdoc()
        page.text(String(repeating: "word ", count: 40))
        XCTAssertGreaterThan(page.lines.count, 1)
        XCTAssertTrue(page.lines.allSatisfy { $0.utf8.count <= 80 }, "\(page.lines)")
    }
}

final class MarkdownManualTests: XCTestCase {
    private func body(_ markdown: String) throws -> String {
        let page = try MarkdownManual.page(name: "x", section: 5, summary: "a format", markdown: markdown, date: "2026-11-26", source: "x")
        return page.text.components(separatedBy: ".Sh DESCRIPTION\n")[1]
    }

    func testSection_isTheTextUnderItsHeading() throws {
        let readme = "# T\n## A\none\n### A1\ntwo\n## B\nthree\n"
        XCTAssertEqual(try MarkdownManual.section("A", of: readme), "one\n### A1\ntwo")
        XCTAssertThrowsError(try MarkdownManual.section("C", of: readme))
    }

    func testDocument_isTheTextUnderItsTitle_withItsSectionsAsSubsections() throws {
        let document = "# Title\n\nintro\n## A\none\n```\n## not a heading\n```\n### A1\n"
        XCTAssertEqual(try MarkdownManual.document(document), "\nintro\n### A\none\n```\n## not a heading\n```\n#### A1\n")
        XCTAssertThrowsError(try MarkdownManual.document("## A\none\n"))
    }

    func testInlineMarkup_touchingPunctuation_staysAttached() throws {
        let text = try body("Rename it (`rename(2)`), then **look**: see [Two](#two) and `a`/`b`.\n\n### Two\n\nEnd.")
        XCTAssertEqual(text, """
            Rename it
            .So ( "rename(2)" Sc ) ,
            then
            .Sy "look" :
            see
            .Sx "Two"
            and
            .So "a" Sc Ns "/" Ns So "b" Sc .
            .Ss "Two"
            End.

            """)
    }

    func testLists_withContinuationsAndCodeInside() throws {
        let text = try body("""
            - First item
              goes on.
            - Second, with code:

              ```json
              {"a": 1}
              ```
            1. One
            2. Two
            """)
        XCTAssertEqual(text, """
            .Bl -bullet
            .It
            First item goes on.
            .It
            Second, with code:
            .Bd -literal -offset indent
            {"a": 1}
            .Ed
            .El
            .Bl -enum
            .It
            One
            .It
            Two
            .El

            """)
    }

    func testTables_areTaggedLists_namingTheColumnsPastTheSecond() throws {
        let text = try body("""
            | step | files | record |
            |---|---|---|
            | claim | `a` → `b` | `claim` |
            """)
        XCTAssertEqual(text, """
            .Bl -tag -width Ds
            .It "claim"
            files:
            .So "a" Sc
            \\[u2192]
            .So "b" Sc
            .Pp
            record:
            .So "claim" Sc
            .El

            """)
    }
}

final class CompletionFormatterTests: XCTestCase {
    private let program = ProgramSpec(
        name: "p", summary: "", abstract: "", commands: [
            CommandSpec(name: "go", abstract: "Go [fast].", options: [
                OptionSpec("mode", valueName: "M", help: "It's a [mode]: fast\\slow.", completion: .choices(["a", "b"])),
                OptionSpec("dir", valueName: "DIR", help: "Where."),
                .flag("quiet", short: "q", help: "Say less."),
            ], positionals: [PositionalSpec("FILE", help: "Files.", repeating: true)]),
        ])

    func testZsh_escapesDescriptionsAndQuotes() {
        let zsh = CompletionFormatter.script(for: program, shell: .zsh)
        XCTAssertTrue(zsh.contains(#"'--mode=[It'\''s a \[mode\]: fast\\slow]:M:(a b)'"#), zsh)
        XCTAssertTrue(zsh.contains("'--dir=[Where]:DIR:_files -/'"), zsh)
        XCTAssertTrue(zsh.contains("'-q[Say less]'"), zsh)
        XCTAssertTrue(zsh.contains("'*:FILE:_files'"), zsh)
        XCTAssertTrue(zsh.contains("'go:Go [fast]'"), zsh)
    }

    func testFish_quotesDescriptions() {
        let fish = CompletionFormatter.script(for: program, shell: .fish)
        XCTAssertTrue(fish.contains(#"-l mode -x -a 'a b' -d 'It\'s a [mode]: fast\\slow'"#), fish)
        XCTAssertTrue(fish.contains("complete -c p -n '__fish_seen_subcommand_from go' -F"), fish)
    }

    func testBash_groupsOptionsByWhatTheirValuesTake() {
        let bash = CompletionFormatter.script(for: program, shell: .bash)
        XCTAssertTrue(bash.contains("--mode) _p_words \"a b\"; return 0 ;;"), bash)
        XCTAssertTrue(bash.contains("--dir) _p_dirs; return 0 ;;"), bash)
        XCTAssertTrue(bash.contains("complete -F _p p"), bash)
    }

    func testSummary_isTheFirstSentence_cutNear80() {
        XCTAssertEqual(CompletionFormatter.summary("One. Two."), "One")
        let long = CompletionFormatter.summary(String(repeating: "word ", count: 30))
        XCTAssertTrue(long.hasSuffix("...") && long.count <= 83, long)
    }
}
