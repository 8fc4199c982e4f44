import Foundation
import SpoolCLI
import SpoolSystem

// The executable only wires the process to the CLI; everything else lives in the libraries.
// A descriptor limit of 1024 (a systemd service's default soft limit) is not a reason to stop.
OpenFileLimit.raiseToHardLimit()
let code = CLI.main(Array(CommandLine.arguments.dropFirst()), context: CommandContext(environment: ProcessInfo.processInfo.environment))
exit(code)
