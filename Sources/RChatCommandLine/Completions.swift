/// Shell completion scripts generated from the declared options, so what a shell offers is
/// what the program accepts: a command or option added to a program's declarations is
/// offered the next time the script is generated (`rchat completion bash|zsh`, which
/// `make install` runs), and nothing that was removed is offered any more.
public enum Completions {
    /// One program as the shell sees it: its subcommands (none for `rchat-relay`) and the
    /// options every command takes.
    public struct Program: Sendable {
        /// One subcommand: `send`, or a two-word one such as `account export`. The empty
        /// name is the program run with no command word (`rchat --open NAME`).
        public struct Command: Sendable {
            public let name: String
            public let summary: String
            public let options: [Option]
            /// The words its first positional takes, when they are few (`settings KEY`).
            public let firstWords: [String]

            public init(name: String, summary: String, options: [Option], firstWords: [String] = []) {
                self.name = name
                self.summary = summary
                self.options = options
                self.firstWords = firstWords
            }
        }

        public let name: String
        public let commands: [Command]
        public let globalOptions: [Option]

        public init(name: String, commands: [Command] = [], globalOptions: [Option]) {
            self.name = name
            self.commands = commands
            self.globalOptions = globalOptions
        }

        /// The command words a shell offers first: each command's first word, once.
        var firstWords: [String] {
            var seen: Set<String> = []
            return commands.compactMap { $0.name.split(separator: " ").first.map(String.init) }
                .filter { seen.insert($0).inserted }
        }

        /// The options of the program run with no command word.
        var bareOptions: [Option] { commands.first(where: { $0.name.isEmpty })?.options ?? [] }

        /// A shell function name for the program: `_rchat_relay`.
        var function: String { "_" + name.map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined() }
    }

    /// What the shell completes after an option that takes a value.
    enum ValueCompletion: Equatable {
        case directories
        case files
        case words([String])
        /// Free text (a name, a number): nothing is offered.
        case nothing

        init(_ option: Option) {
            if !option.values.isEmpty { self = .words(option.values); return }
            switch option.placeholder {
            case "DIR": self = .directories
            case "FILE", "PATH": self = .files
            default: self = .nothing
            }
        }
    }

    // MARK: bash

    /// One bash script completing every program given (`complete -F` for each).
    public static func bash(_ programs: [Program]) -> String {
        var script = """
        # bash completion for \(programs.map(\.name).joined(separator: " and ")), generated from the options they declare
        # (`rchat completion bash`): install as share/bash-completion/completions/NAME.

        """
        for program in programs { script += bashFunction(program) }
        return script
    }

    private static func bashFunction(_ program: Program) -> String {
        let globalValues = program.globalOptions.filter { $0.placeholder != nil }.map(\.name)
        let twoWords = Dictionary(grouping: program.commands.filter { $0.name.contains(" ") }) {
            String($0.name.split(separator: " ")[0])
        }
        var lines: [String] = []
        lines.append("\(program.function)() {")
        lines.append("    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" command=\"\" i w")
        lines.append("    (( COMP_CWORD > 0 )) && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"")
        lines.append("    COMPREPLY=()")
        if !program.commands.isEmpty {
            // The command: the first word that is neither an option nor a global option's value.
            lines.append("    for (( i = 1; i < COMP_CWORD; i++ )); do")
            lines.append("        w=\"${COMP_WORDS[i]}\"")
            if !globalValues.isEmpty {
                lines.append("        case \"$w\" in \(globalValues.joined(separator: "|"))) (( i++ )); continue ;; esac")
            }
            lines.append("        [[ $w == -* ]] && continue")
            lines.append("        command=\"$w\"")
            if !twoWords.isEmpty {
                lines.append("        case \"$w\" in \(twoWords.keys.sorted().joined(separator: "|")))")
                lines.append("            if (( i + 1 < COMP_CWORD )); then command=\"$w ${COMP_WORDS[i+1]}\"; else command=\"$w \"; fi ;;")
                lines.append("        esac")
            }
            lines.append("        break")
            lines.append("    done")
        }
        // A value after an option that takes one.
        lines.append("    case \"$command|$prev\" in")
        func valueArm(_ pattern: String, _ option: Option) {
            switch ValueCompletion(option) {
            case .directories: lines.append("        \(pattern)) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;")
            case .files: lines.append("        \(pattern)) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;")
            case .words(let words): lines.append("        \(pattern)) COMPREPLY=($(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\")); return ;;")
            case .nothing: lines.append("        \(pattern)) return ;;")
            }
        }
        for option in program.globalOptions where option.placeholder != nil { valueArm("*\"|\(option.name)\"", option) }
        for command in program.commands {
            for option in command.options where option.placeholder != nil { valueArm("\"\(command.name)|\(option.name)\"", option) }
        }
        lines.append("    esac")
        // Options, then command words, then files for a command's positionals.
        let globals = program.globalOptions.flatMap { [$0.name] + $0.aliases.filter { $0.hasPrefix("--") } }
        lines.append("    local opts=\"\(globals.joined(separator: " "))\"")
        if !program.commands.isEmpty {
            lines.append("    case \"$command\" in")
            for command in program.commands {
                let own = command.options.map(\.name)
                guard !own.isEmpty else { continue }
                lines.append("        \"\(command.name)\") opts=\"\(own.joined(separator: " ")) $opts\" ;;")
            }
            lines.append("    esac")
        }
        lines.append("    if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")); return; fi")
        if !program.commands.isEmpty {
            lines.append("    case \"$command\" in")
            lines.append("        \"\") COMPREPLY=($(compgen -W \"\(program.firstWords.joined(separator: " "))\" -- \"$cur\")); return ;;")
            for first in twoWords.keys.sorted() {
                let seconds = twoWords[first]!.map { String($0.name.split(separator: " ")[1]) }
                lines.append("        \"\(first) \") COMPREPLY=($(compgen -W \"\(seconds.joined(separator: " "))\" -- \"$cur\")); return ;;")
            }
            lines.append("    esac")
            // Right after the command word: the words its first positional takes.
            for command in program.commands where !command.firstWords.isEmpty {
                let last = command.name.split(separator: " ").last.map(String.init) ?? command.name
                lines.append("    [[ $command == \"\(command.name)\" && $prev == \"\(last)\" ]] && { COMPREPLY=($(compgen -W \"\(command.firstWords.joined(separator: " "))\" -- \"$cur\")); return; }")
            }
        }
        lines.append("    COMPREPLY=($(compgen -f -- \"$cur\"))")
        lines.append("}")
        lines.append("complete -o filenames -F \(program.function) \(program.name)")
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: zsh

    /// One zsh script (`#compdef` for every program given), for share/zsh/site-functions.
    public static func zsh(_ programs: [Program], file: String) -> String {
        var script = """
        #compdef \(programs.map(\.name).joined(separator: " "))
        # zsh completion for \(programs.map(\.name).joined(separator: " and ")), generated from the options they declare
        # (`rchat completion zsh`): install as share/zsh/site-functions/\(file).

        """
        for program in programs { script += zshFunction(program) }
        script += "case $service in\n"
        for program in programs { script += "    \(program.name)) \(program.function) \"$@\" ;;\n" }
        script += "esac\n"
        return script
    }

    /// `'--quota[held items per mailbox]:N:'`: an `_arguments` spec for one option.
    static func zshSpec(_ option: Option) -> [String] {
        let description = zshEscaped(option.help.split(separator: "\n").joined(separator: " "), brackets: true)
        let names = [option.name] + option.aliases
        var action = ""
        if let placeholder = option.placeholder {
            let message = zshEscaped(placeholder, brackets: false).replacingColons
            switch ValueCompletion(option) {
            case .directories: action = ":\(message):_directories"
            case .files: action = ":\(message):_files"
            case .words(let words): action = ":\(message):(\(words.joined(separator: " ")))"
            case .nothing: action = ":\(message): "
            }
        }
        if names.count == 1 { return ["'\(option.name)[\(description)]\(action)'"] }
        let exclusive = "(\(names.joined(separator: " ")))"
        return names.map { "'\(exclusive)\($0)[\(description)]\(action)'" }
    }

    private static func zshEscaped(_ text: String, brackets: Bool) -> String {
        var out = ""
        for character in text {
            switch character {
            case "'": out += "'\\''"
            case "[" where brackets, "]" where brackets: out += "\\\(character)"
            default: out.append(character)
            }
        }
        return out
    }

    private static func zshFunction(_ program: Program) -> String {
        var lines: [String] = []
        let globals = program.globalOptions.flatMap(zshSpec)
        lines.append("\(program.function)() {")
        guard !program.commands.isEmpty else {
            lines.append("    _arguments \\")
            lines.append(globals.map { "        \($0)" }.joined(separator: " \\\n"))
            lines.append("}")
            return lines.joined(separator: "\n") + "\n"
        }
        let described = program.firstWords.map { first -> String in
            let summary = program.commands.first { $0.name == first || $0.name.hasPrefix(first + " ") }?.summary ?? ""
            return "        '\(first):\(zshEscaped(summary, brackets: false).replacingColons)'"
        }
        lines.append("    local -a commands")
        lines.append("    commands=(")
        lines.append(contentsOf: described)
        lines.append("    )")
        lines.append("    local curcontext=\"$curcontext\" state line")
        lines.append("    _arguments -C \\")
        for spec in globals + program.bareOptions.flatMap(zshSpec) { lines.append("        \(spec) \\") }
        lines.append("        '1:command:->command' \\")
        lines.append("        '*::argument:->argument'")
        lines.append("    case $state in")
        lines.append("        command) _describe -t commands '\(program.name) command' commands ;;")
        lines.append("        argument)")
        lines.append("            case $words[1] in")
        let grouped = Dictionary(grouping: program.commands.filter { !$0.name.isEmpty }) { String($0.name.split(separator: " ")[0]) }
        for first in program.firstWords {
            guard let group = grouped[first] else { continue }
            if group.count == 1, !group[0].name.contains(" ") {
                let first = group[0].firstWords.isEmpty ? [] : ["'1:word:(\(group[0].firstWords.joined(separator: " ")))'"]
                let specs = (group[0].options.flatMap(zshSpec) + globals + first + ["'*:file:_files'"]).joined(separator: " ")
                lines.append("                \(first)) _arguments \(specs) ;;")
            } else {
                lines.append("                \(first))")
                lines.append("                    if (( CURRENT == 2 )); then")
                lines.append("                        _values 'subcommand' \(group.map { String($0.name.split(separator: " ")[1]) }.joined(separator: " "))")
                lines.append("                    else")
                lines.append("                        case $words[2] in")
                for command in group {
                    let second = command.name.split(separator: " ")[1]
                    let specs = (command.options.flatMap(zshSpec) + globals + ["'*:file:_files'"]).joined(separator: " ")
                    lines.append("                            \(second)) shift words; (( CURRENT-- )); _arguments \(specs) ;;")
                }
                lines.append("                        esac")
                lines.append("                    fi ;;")
            }
        }
        lines.append("            esac ;;")
        lines.append("    esac")
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    /// A zsh `_arguments` message cannot hold a bare colon.
    fileprivate var replacingColons: String {
        var out = ""
        for character in self { if character == ":" { out += "\\:" } else { out.append(character) } }
        return out
    }
}
