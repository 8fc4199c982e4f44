import Foundation
import SpoolCLI

// Writes spoold's manual pages: spoold(8) and spoold-COMMAND(8) from the command-line specs (the
// same as --help), spoold-spool(5) from docs/spool.md, the on-disk protocol.
// scripts/readme-cli runs it into docs/man/; ManualTests fails when the two drift apart.
// Usage: spoold-docs OUTPUT-DIR docs/spool.md
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let output = arguments.first, let spool = arguments.last else {
    FileHandle.standardError.write(Data("usage: spoold-docs OUTPUT-DIR docs/spool.md\n".utf8))
    exit(2)
}
do {
    let markdown = try String(contentsOfFile: spool, encoding: .utf8)
    try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
    for page in try Manual.pages(spool: markdown) {
        try Data(page.text.utf8).write(to: URL(fileURLWithPath: output).appendingPathComponent(page.fileName))
    }
} catch {
    FileHandle.standardError.write(Data("spoold-docs: \(error)\n".utf8))
    exit(1)
}
