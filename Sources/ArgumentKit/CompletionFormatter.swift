/// Shell completion scripts made from the same `ProgramSpec` as `--help`: the commands, each
/// command's options, and what each value takes (`ValueCompletion`: a directory, a file, one of
/// a few words, or free text, where nothing is offered).
public enum CompletionFormatter {
    public enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    public static func script(for program: ProgramSpec, shell: Shell) -> String {
        switch shell {
        case .bash: bash(program)
        case .zsh: zsh(program)
        case .fish: fish(program)
        }
    }

    /// `spoold` as a shell identifier: `spoold_docs` for `spoold-docs`.
    static func identifier(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// The option's names as typed: `-v --verbose`.
    static func names(_ option: OptionSpec) -> [String] {
        (option.short.map { ["-\($0)"] } ?? []) + ["--" + option.name]
    }

    /// The first sentence of a help text, for a shell's one-line description; cut after a word
    /// near 80 characters.
    static func summary(_ help: String) -> String {
        var text = Substring(help)
        if let end = text.firstRange(of: ". ") { text = text[..<end.lowerBound] }
        if text.hasSuffix(".") { text = text.dropLast() }
        guard text.count > 80 else { return String(text) }
        let cut = text.prefix(80)
        return String(cut[..<(cut.lastIndex(of: " ") ?? cut.endIndex)]) + "..."
    }

    // MARK: bash

    static func bash(_ program: ProgramSpec) -> String {
        let function = "_\(identifier(program.name))"
        let commandNames = program.commands.map(\.name).joined(separator: " ")
        let programOptions = (["-h", "--help"] + program.options.flatMap(names)).joined(separator: " ")
        var lines = [
            "# bash completion for \(program.name), made by '\(program.name) completion bash' from the same specs as --help.",
            "# Install: \(program.name) completion bash > /usr/share/bash-completion/completions/\(program.name)",
            "# (or source it from ~/.bashrc).",
            "\(function)_words() { mapfile -t COMPREPLY < <(compgen -W \"$1\" -- \"$cur\"); }",
            "\(function)_files() { compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); }",
            "\(function)_dirs() { compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- \"$cur\"); }",
            "",
            "\(function)() {",
            "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\"",
            "    (( COMP_CWORD > 0 )) && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"",
            "    # --name=value: bash splits the word at '='.",
            "    if [[ $cur == \"=\" ]]; then",
            "        cur=\"\"",
            "    elif [[ $prev == \"=\" ]] && (( COMP_CWORD > 1 )); then",
            "        prev=\"${COMP_WORDS[COMP_CWORD-2]}\"",
            "    fi",
            "    COMPREPLY=()",
        ]
        // The first word may also be an option of the default command (`spoold --spool DIR` runs).
        let defaultOptions = program.defaultCommand.flatMap(program.command(named:)).map { $0.options.flatMap(names) } ?? []
        lines += [
            "    if (( COMP_CWORD == 1 )); then",
            "        if [[ $cur == -* ]]; then \(function)_words \"\(([programOptions] + defaultOptions).joined(separator: " "))\"",
            "        else \(function)_words \"\(commandNames)\"; fi",
            "        return 0",
            "    fi",
            "    local command=\"${COMP_WORDS[1]}\"",
        ]
        if let defaultCommand = program.defaultCommand {
            lines.append("    [[ $command == -* ]] && command=\(defaultCommand)")
        }
        lines.append("    case \"$command\" in")
        for command in program.commands {
            lines.append("    \(command.name))")
            lines.append("        case \"$prev\" in")
            var byAction: [(pattern: [String], action: String)] = []
            for option in command.options where option.kind != .flag {
                let action = bashAction(option.completion, function: function)
                if let index = byAction.firstIndex(where: { $0.action == action }) {
                    byAction[index].pattern += names(option)
                } else {
                    byAction.append((names(option), action))
                }
            }
            for (pattern, action) in byAction {
                lines.append("        \(pattern.joined(separator: "|"))) \(action); return 0 ;;")
            }
            lines.append("        esac")
            lines.append("        if [[ $cur == -* ]]; then \(function)_words \"\(bashOptionWords(command))\"; return 0; fi")
            if let positional = command.positionals.first {
                let kinds = Set(command.positionals.map(\.completion))
                let completion = kinds.count == 1 ? positional.completion : .none
                lines.append("        \(bashAction(completion, function: function))")
            }
            lines.append("        ;;")
        }
        lines += ["    esac", "    return 0", "}", "complete -F \(function) \(program.name)", ""]
        return lines.joined(separator: "\n")
    }

    static func bashOptionWords(_ command: CommandSpec) -> String {
        (command.options.flatMap(names) + ["-h", "--help"]).joined(separator: " ")
    }

    static func bashAction(_ completion: ValueCompletion, function: String) -> String {
        switch completion {
        case .none: ":"
        case .file: "\(function)_files"
        case .directory: "\(function)_dirs"
        case .choices(let words): "\(function)_words \"\(words.joined(separator: " "))\""
        }
    }

    // MARK: zsh

    static func zsh(_ program: ProgramSpec) -> String {
        let function = "_\(identifier(program.name))"
        var lines = [
            "#compdef \(program.name)",
            "# zsh completion for \(program.name), made by '\(program.name) completion zsh' from the same specs as --help.",
            "# Install: \(program.name) completion zsh > /usr/share/zsh/vendor-completions/_\(program.name)",
            "# (or into a folder of your $fpath, as _\(program.name)).",
            "",
            "\(function)() {",
            "    local -a commands",
            "    commands=(",
        ]
        for command in program.commands {
            lines.append("        \(zshQuoted(command.name + ":" + summary(command.abstract)))")
        }
        lines += [
            "    )",
            "    if (( CURRENT == 2 )) && [[ $words[2] != -* ]]; then",
            "        _describe -t commands \(zshQuoted(program.name + " command")) commands",
            "        return",
            "    fi",
            "    local command=$words[2]",
        ]
        if let defaultCommand = program.defaultCommand {
            lines += [
                "    if [[ $command == -* ]]; then",
                "        command=\(defaultCommand)",
                "    else",
                "        shift words",
                "        (( CURRENT-- ))",
                "    fi",
            ]
        } else {
            lines += ["    shift words", "    (( CURRENT-- ))"]
        }
        lines.append("    case $command in")
        for command in program.commands {
            lines.append("    \(command.name))")
            lines.append("        _arguments -s -S \\")
            var specs: [String] = []
            for option in command.options + [HelpFormatter.helpOption] {
                for name in names(option) {
                    let repeatable = option.kind == .repeatedValue ? "*" : ""
                    let description = "[" + zshBracketed(summary(option.help)) + "]"
                    switch option.kind {
                    case .flag:
                        specs.append(zshQuoted(name + description))
                    case .value, .repeatedValue:
                        let equals = name.hasPrefix("--") ? "=" : ""
                        specs.append(zshQuoted(
                            repeatable + name + equals + description + ":" + zshMessage(option.valueName) + ":"
                                + zshAction(option.completion)))
                    }
                }
            }
            for positional in command.positionals {
                let colons = positional.optional ? "::" : ":"
                specs.append(zshQuoted(
                    (positional.repeating ? "*" : "") + colons + zshMessage(positional.name) + ":" + zshAction(positional.completion)))
            }
            for (index, spec) in specs.enumerated() {
                lines.append("            \(spec)" + (index + 1 < specs.count ? " \\" : ""))
            }
            lines.append("        ;;")
        }
        lines += [
            "    esac",
            "}",
            "",
            "if [[ $funcstack[1] == \(function) ]]; then",
            "    \(function) \"$@\"",
            "else",
            "    compdef \(function) \(program.name)",
            "fi",
            "",
        ]
        return lines.joined(separator: "\n")
    }

    /// A single-quoted zsh word.
    static func zshQuoted(_ text: String) -> String { "'" + text.replacing("'", with: "'\\''") + "'" }

    /// Text inside an `_arguments` description's brackets.
    static func zshBracketed(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "[" || character == "]" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out
    }

    /// An `_arguments` message: a colon would end it.
    static func zshMessage(_ text: String) -> String {
        text.replacing("\\", with: "\\\\").replacing(":", with: "\\:")
    }

    static func zshAction(_ completion: ValueCompletion) -> String {
        switch completion {
        case .none: " "
        case .file: "_files"
        case .directory: "_files -/"
        case .choices(let words): "(" + words.joined(separator: " ") + ")"
        }
    }

    // MARK: fish

    static func fish(_ program: ProgramSpec) -> String {
        let name = program.name
        let commands = program.commands.map(\.name).joined(separator: " ")
        let noCommand = "not __fish_seen_subcommand_from \(commands)"
        var lines = [
            "# fish completion for \(name), made by '\(name) completion fish' from the same specs as --help.",
            "# Install: \(name) completion fish > /usr/share/fish/vendor_completions.d/\(name).fish",
            "complete -c \(name) -f",
        ]
        for command in program.commands {
            lines.append("complete -c \(name) -n \(fishQuoted(noCommand)) -a \(command.name) -d \(fishQuoted(summary(command.abstract)))")
        }
        for option in [HelpFormatter.helpOption] + program.options {
            lines.append("complete -c \(name) -n \(fishQuoted(noCommand)) \(fishOption(option))")
        }
        for command in program.commands {
            let condition = "-n " + fishQuoted("__fish_seen_subcommand_from \(command.name)")
            for option in command.options + [HelpFormatter.helpOption] {
                lines.append("complete -c \(name) \(condition) \(fishOption(option))")
            }
            if let positional = command.positionals.first {
                switch positional.completion {
                case .none: break
                case .file: lines.append("complete -c \(name) \(condition) -F")
                case .directory: lines.append("complete -c \(name) \(condition) -a '(__fish_complete_directories)'")
                case .choices(let words): lines.append("complete -c \(name) \(condition) -a \(fishQuoted(words.joined(separator: " ")))")
                }
            }
        }
        lines.append("")
        return lines.joined(separator: "\n")
    }

    /// `-s v -l verbose -d '...'`, with what its value takes.
    static func fishOption(_ option: OptionSpec) -> String {
        var parts: [String] = []
        if let short = option.short { parts += ["-s", String(short)] }
        parts += ["-l", option.name]
        if option.kind != .flag {
            switch option.completion {
            case .none: parts.append("-x")
            case .file: parts += ["-r", "-F"]
            case .directory: parts += ["-x", "-a", "'(__fish_complete_directories)'"]
            case .choices(let words): parts += ["-x", "-a", fishQuoted(words.joined(separator: " "))]
            }
        }
        parts += ["-d", fishQuoted(summary(option.help))]
        return parts.joined(separator: " ")
    }

    /// A single-quoted fish word: only `\` and `'` are special inside.
    static func fishQuoted(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }
}
