import RChatCommandLine

/// The words after `rchat COMMAND`, parsed against the command's declared options and the
/// global ones: positionals in order, `--flag [value]` options checked, so a typo is a
/// usage error and never a silent default.
typealias Arguments = ParsedArguments

extension ParsedArguments {
    typealias UsageError = RChatCommandLine.UsageError

    var wantsHelp: Bool { has(GlobalOptions.help) }
}

/// The options every command takes, before or after the command word: `rchat --home H
/// contacts` is `rchat contacts --home H`.
enum GlobalOptions {
    static let home = Option.text("--home", "DIR", help: "account data (default $XDG_DATA_HOME/rchat; or RCHAT_HOME)")
    static let deviceDirectory = Option.text("--device-dir", "DIR", help: """
        this machine's device keystore (default $XDG_STATE_HOME/rchat-device;
        or RCHAT_DEVICE_DIR)
        """)
    static let help = Option.flag("--help", aliases: ["-h"], help: "explain the command")

    /// What help lists under "Every command also takes" (help itself goes without saying).
    static let shown = [home, deviceDirectory]
    static let all = shown + [help]
}
