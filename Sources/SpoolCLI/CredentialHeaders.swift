import ArgumentKit
import Foundation
import Glibc
import SpoolCore
import SpoolStore
import SpoolSystem

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

    /// What is wrong with a file secrets are read from (`--header-file`, the S3 shared
    /// credentials file, a client key): others may read or change it, or it is not the user's
    /// (`SecretFileRule`), for the file as it opens (a symlink followed); nil when nothing is, or
    /// it cannot be opened. A warning, not a refusal: the run and the purge go on.
    static func fileWarning(_ path: String) -> String? {
        let fs = PosixFileSystem()
        guard let fd = try? fs.open(path, relativeTo: nil, flags: [.readOnly, .nonBlocking, .followSymlinks], mode: 0) else { return nil }
        defer { fs.close(fd) }
        guard let status = try? fs.status(of: fd),
            let warning = SecretFileRule.warning(owner: status.owner, permissions: status.permissions, user: geteuid())
        else { return nil }
        return "secrets are read from \(path), but \(warning)"
    }
}
