import RChatCommandLine
import RChatEngine
import RChatRelay

/// Every `rchat` command, in the order `rchat --help` lists them.
enum CommandTable {
    static let all: [Command] = AccountCommands.all + ContactCommands.all + MessageCommands.all + ContactStateCommands.all
        + CheckCommand.all
        + [RenameCommand.command, SearchCommand.command, GroupCommands.command]
        + [DemoCommands.command, TUICommand.view, Linger.command, NotifyCommand.command]
        + [CompletionCommand.command]
}

/// `rchat completion bash|zsh`: the shell completion script for `rchat` and `rchat-relay`,
/// made from the commands and options both programs declare (`make install` writes it).
enum CompletionCommand {
    enum Shell: String, CaseIterable, Sendable { case bash, zsh }

    static let command = Command(
        name: "completion", usage: "rchat completion bash|zsh",
        summary: "Print the shell completion script for rchat and rchat-relay.",
        details: """
        bash: save it as share/bash-completion/completions/rchat (and a copy or link named
        rchat-relay), or source it from ~/.bashrc. zsh: save it as _rchat in a directory of
        $fpath. `make install` does both.
        """
    ) { args, _ in
        try args.expectPositionals(max: 1)
        let word = try args.positional(0, "SHELL (bash or zsh)")
        guard let shell = Shell(rawValue: word) else {
            throw Arguments.UsageError(description: "unknown shell \"\(word)\" (bash or zsh)")
        }
        print(script(for: shell), terminator: "")
    }

    static func script(for shell: Shell) -> String {
        let rchat = Completions.Program(
            name: "rchat",
            commands: CommandTable.all.map {
                .init(name: $0.name, summary: $0.summary, options: $0.options,
                      firstWords: $0.name == "settings" ? Setting.allCases.map(\.rawValue) : [])
            },
            globalOptions: GlobalOptions.all)
        let relay = Completions.Program(name: "rchat-relay", globalOptions: RelayConfiguration.declaredOptions)
        switch shell {
        case .bash: return Completions.bash([rchat, relay])
        case .zsh: return Completions.zsh([rchat, relay], file: "_rchat")
        }
    }
}
