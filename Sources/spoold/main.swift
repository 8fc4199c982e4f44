import Foundation
import SpoolCLI

// The executable only wires the process to the CLI; everything else lives in the libraries.
let code = CLI.main(Array(CommandLine.arguments.dropFirst()), context: CommandContext(environment: ProcessInfo.processInfo.environment))
exit(code)
