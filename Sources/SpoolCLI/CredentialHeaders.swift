import ArgumentKit
import Foundation
import SpoolCore
import SpoolStore

/// Headers that carry secrets (`--header-file`, `--header-env`): read at start-up, kept only in
/// memory, sent with every request, never written to an item's json, the index or the log.
/// Error messages name the file, line or variable, never the value.
enum CredentialHeaders {
    static func load(_ arguments: ParsedArguments, environment: [String: String], command: String) throws
        -> [String: String]
    {
        var headers: [String: String] = [:]
        for path in arguments.values("header-file") {
            for (name, value) in try parseFile(path, command: command) { HeaderFields.set(name, value, in: &headers) }
        }
        for variable in arguments.values("header-env") {
            guard let text = environment[variable], !text.isEmpty else {
                throw ArgumentError("--header-env \(variable): the environment variable is not set or empty", command: command)
            }
            switch HeaderRule.parse(text) {
            case .success(let field): HeaderFields.set(field.name, field.value, in: &headers)
            case .failure(let refusal):
                throw ArgumentError(
                    "--header-env \(variable): \(refusal) (the variable must hold 'Name: value': a token name, no control characters, not a header spoold sets itself)",
                    command: command)
            }
        }
        return headers
    }

    /// `Name: value` per line; blank lines and lines starting with `#` are skipped.
    static func parseFile(_ path: String, command: String) throws -> [(String, String)] {
        let text: String
        switch OperatorFile.read(path) {
        case .text(let read): text = read
        case .unreadable: throw ArgumentError("--header-file \(path): cannot be read", command: command)
        case .tooLarge: throw ArgumentError("--header-file \(path): larger than \(SmallText.maximumBytes) bytes", command: command)
        case .notUTF8: throw ArgumentError("--header-file \(path): not UTF-8 text", command: command)
        }
        var headers: [(String, String)] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.hasSuffix("\r") ? String(rawLine.dropLast()) : String(rawLine)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            switch HeaderRule.parse(line) {
            case .success(let field): headers.append((field.name, field.value))
            case .failure(let refusal):
                throw ArgumentError(
                    "--header-file \(path) line \(number + 1): \(refusal) (expected 'Name: value': a token name, no control characters, not a header spoold sets itself)",
                    command: command)
            }
        }
        return headers
    }
}
