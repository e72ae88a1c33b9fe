import Foundation
import XCTest

/// `--version`, `make install` / `make uninstall`, the man pages and the shell completions,
/// each checked against what the programs declare: a command or option that exists is in
/// its man page and is completed, and the installed tree runs.
final class InstallTests: XCTestCase {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    func testBothProgramsPrintTheirVersionAndProtocol() throws {
        let sandbox = try Sandbox()
        for program in ["rchat", "rchat-relay"] {
            let run = try sandbox.run(Binaries.path(program), ["--version"])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(run.lines.count, 1, run.stdout)
            XCTAssertTrue((try? Regex(#"^\#(program) \d+\.\d+\.\d+ \(relay protocol \d+\)$"#))
                .map { run.lines.first?.wholeMatch(of: $0) != nil } ?? false, run.stdout)
        }
        // Not an option of any command: `rchat send --version` is a usage error, as any typo.
        let misplaced = try sandbox.run(Binaries.path("rchat"), ["send", "--version"])
        XCTAssertEqual(misplaced.status, 2)
    }

    // MARK: what the programs declare

    /// Every command word of `rchat --help` (two-word ones whole).
    static func commandNames(_ sandbox: Sandbox) throws -> [String] {
        let help = try sandbox.run(Binaries.path("rchat"), ["--help"]).stdout
        return help.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  rchat ") else { return nil }
            let words = line.dropFirst(8).split(separator: " ").map(String.init)
            guard let first = words.first, first.first?.isLetter == true else { return nil }
            if let second = words.dropFirst().first, second.first?.isLowercase == true, second.allSatisfy({ $0.isLetter }),
               ["account", "keys"].contains(first) { return "\(first) \(second)" }
            return first.split(separator: "|").first.map(String.init)
        }
    }

    /// The options listed in a help text (`  --name NAME  …`, `  --help, -h  …`).
    static func options(inHelp help: String) -> Set<String> {
        var found: Set<String> = []
        for line in help.split(separator: "\n") where line.hasPrefix("  --") {
            found.insert(String(line.dropFirst(2).prefix { $0 != " " && $0 != "," }))
        }
        return found
    }

    func testTheManPagesNameEveryCommandOptionAndSetting() throws {
        let sandbox = try Sandbox()
        let page = try String(contentsOf: Self.packageRoot.appendingPathComponent("Resources/rchat.1"), encoding: .utf8)
            .replacingOccurrences(of: "\\-", with: "-")
        let commands = try Self.commandNames(sandbox)
        XCTAssertGreaterThan(commands.count, 20, "rchat --help lists the commands")
        for command in commands {
            // The command's words in bold at the start of a tag line (.B/.BI/.BR).
            let words = command.split(separator: " ").joined(separator: " ")
            XCTAssertTrue(page.contains("\n.BI \"\(words)") || page.contains("\n.B \(words)") || page.contains("\n.BR \"\(words)")
                          || page.contains("\n.BI \(words)") || page.contains("\n.BR \(words)") || page.contains("|\\fB\(words)"),
                          "rchat.1 has no entry for `rchat \(command)`")
            let help = try sandbox.run(Binaries.path("rchat"), command.split(separator: " ").map(String.init) + ["--help"]).stdout
            for option in Self.options(inHelp: help) {
                XCTAssertTrue(page.contains(option), "rchat.1 does not mention \(option) (of `rchat \(command)`)")
            }
        }
        let settingsHelp = try sandbox.run(Binaries.path("rchat"), ["settings", "--help"]).stdout
        let settings = settingsHelp.split(separator: "\n").compactMap { line -> String? in
            guard let first = line.first, first.isLowercase, line.contains("  ") else { return nil }
            return String(line.prefix { $0 != " " })
        }.filter { !$0.hasPrefix("usage") }
        XCTAssertGreaterThan(settings.count, 5, settingsHelp)
        for setting in settings { XCTAssertTrue(page.contains(setting), "rchat.1 does not describe the setting \(setting)") }

        let relayPage = try String(contentsOf: Self.packageRoot.appendingPathComponent("Resources/rchat-relay.8"), encoding: .utf8)
            .replacingOccurrences(of: "\\-", with: "-")
        let relayOptions = Self.options(inHelp: try sandbox.run(Binaries.path("rchat-relay"), ["--help"]).stdout)
        XCTAssertGreaterThan(relayOptions.count, 15)
        for option in relayOptions { XCTAssertTrue(relayPage.contains(option), "rchat-relay.8 does not mention \(option)") }
        XCTAssertTrue(relayPage.contains("--version"), "rchat-relay.8 does not mention --version")
    }

    func testTheManPagesFormatWithoutWarnings() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/groff") else { throw XCTSkip("groff is not installed") }
        let sandbox = try Sandbox()
        for page in ["rchat.1", "rchat-relay.8"] {
            let path = Self.packageRoot.appendingPathComponent("Resources/\(page)").path
            let run = try sandbox.run("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", path])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(run.stderr, "", "\(page): \(run.stderr)")
        }
    }

    // MARK: completion

    /// What bash completes for the words typed so far (the last one is being completed).
    func bashCompletes(_ script: String, _ words: [String], _ sandbox: Sandbox) throws -> [String] {
        let file = sandbox.path("completion.bash")
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let run = try sandbox.run("/bin/bash", ["--norc", "-c", """
            source '\(file)'
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            \(words[0] == "rchat" ? "_rchat" : "_rchat_relay")
            printf '%s\\n' "${COMPREPLY[@]}"
            """])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.lines
    }

    func testBashCompletionOffersWhatTheProgramsDeclare() throws {
        let sandbox = try Sandbox()
        let generated = try sandbox.run(Binaries.path("rchat"), ["completion", "bash"])
        XCTAssertEqual(generated.status, 0, generated.stderr)
        let script = generated.stdout

        XCTAssertEqual(Set(try bashCompletes(script, ["rchat", ""], sandbox)), Set(try Self.commandNames(sandbox).map {
            String($0.split(separator: " ")[0])
        }), "the first word: every command")
        XCTAssertEqual(Set(try bashCompletes(script, ["rchat", "se"], sandbox)), ["send", "settings", "search"])
        XCTAssertEqual(try bashCompletes(script, ["rchat", "account", ""], sandbox), ["export"])
        XCTAssertEqual(Set(try bashCompletes(script, ["rchat", "settings", "m"], sandbox)), ["mouse", "max-attachment-mb", "max-incoming-mb"],
                       "a setting's name after settings")
        XCTAssertEqual(Set(try bashCompletes(script, ["rchat", "send", "Sam", "--"], sandbox)),
                       ["--file", "--as", "--reply-to", "--home", "--device-dir", "--help"])
        XCTAssertEqual(try bashCompletes(script, ["rchat", "send", "Sam", "--file", "x", "--as", ""], sandbox), ["photo", "voice", "file"])
        XCTAssertEqual(try bashCompletes(script, ["rchat", "--home", sandbox.path("home"), "list", "--j"], sandbox), ["--json"],
                       "a global option's value is not taken for the command")
        // Free text after --name: nothing offered.
        XCTAssertEqual(try bashCompletes(script, ["rchat", "init", "--name", ""], sandbox), [])
        // A directory for --home.
        try FileManager.default.createDirectory(atPath: sandbox.path("homes/alice"), withIntermediateDirectories: true)
        XCTAssertEqual(try bashCompletes(script, ["rchat", "--home", sandbox.path("homes/al")], sandbox), [sandbox.path("homes/alice")])

        let relayOptions = Self.options(inHelp: try sandbox.run(Binaries.path("rchat-relay"), ["--help"]).stdout)
        XCTAssertEqual(Set(try bashCompletes(script, ["rchat-relay", "--"], sandbox)), relayOptions)
        let levels = try bashCompletes(script, ["rchat-relay", "--log-level", ""], sandbox)
        XCTAssertTrue(Set(["error", "note", "warning"]).isSubset(of: levels), "\(levels)")
    }

    func testZshCompletionIsValidZsh() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") else { throw XCTSkip("zsh is not installed") }
        let sandbox = try Sandbox()
        let script = try sandbox.run(Binaries.path("rchat"), ["completion", "zsh"]).stdout
        XCTAssertTrue(script.hasPrefix("#compdef rchat rchat-relay\n"))
        try script.write(toFile: sandbox.path("_rchat"), atomically: true, encoding: .utf8)
        let check = try sandbox.run("/usr/bin/zsh", ["-n", sandbox.path("_rchat")])
        XCTAssertEqual(check.status, 0, check.stderr)
        // Loaded by compinit from a directory of $fpath, both programs get the function.
        let loaded = try sandbox.run("/usr/bin/zsh", ["-f", "-c", """
            fpath=('\(sandbox.root.path)' $fpath); autoload -Uz compinit; compinit -u -d '\(sandbox.path("zcompdump"))'
            print -r -- "$_comps[rchat] $_comps[rchat-relay]"
            """])
        XCTAssertEqual(loaded.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "_rchat _rchat", loaded.stderr)
    }

    func testCompletionRefusesAnUnknownShell() throws {
        let run = try Sandbox().run(Binaries.path("rchat"), ["completion", "fish"])
        XCTAssertFailsCleanly(run, status: 2, mentions: "fish")
    }

    // MARK: make install

    func testMakeInstallPutsEveryFileUnderThePrefixAndUninstallRemovesThem() throws {
        let sandbox = try Sandbox()
        let destination = sandbox.path("stage")
        let make = ["-s", "-C", Self.packageRoot.path, "BUILT=\(Binaries.directory.path)", "DESTDIR=\(destination)", "PREFIX=/usr"]
        let install = try sandbox.run("/usr/bin/make", make + ["install-files"])
        XCTAssertEqual(install.status, 0, install.stderr)
        let expected: [String: Int] = [
            "usr/bin/rchat": 0o755, "usr/bin/rchat-relay": 0o755,
            "usr/share/man/man1/rchat.1": 0o644, "usr/share/man/man8/rchat-relay.8": 0o644,
            "usr/lib/systemd/system/rchat-relay.service": 0o644, "usr/lib/systemd/system/rchat-relay@.service": 0o644,
            "usr/share/doc/rchat/rchat-relay.conf": 0o644, "usr/share/doc/rchat/rchat-relay-node.conf": 0o644,
            "usr/share/bash-completion/completions/rchat": 0o644, "usr/share/bash-completion/completions/rchat-relay": 0o644,
            "usr/share/zsh/site-functions/_rchat": 0o644,
        ]
        let files = sandbox.snapshot(destination)
        XCTAssertEqual(Set(files.keys), Set(expected.keys), "exactly these files, nothing else")
        for (file, mode) in expected {
            XCTAssertEqual(sandbox.mode("\(destination)/\(file)").map { $0 & 0o777 }, mode, file)
        }
        // The units start the installed relay, not /usr/local's.
        for unit in ["rchat-relay.service", "rchat-relay@.service"] {
            let text = String(decoding: files["usr/lib/systemd/system/\(unit)"] ?? Data(), as: UTF8.self)
            XCTAssertTrue(text.contains("ExecStart=/usr/bin/rchat-relay "), unit)
            XCTAssertFalse(text.contains("/usr/local"), unit)
        }
        // The installed programs run, and the completion installed is the one they generate.
        let version = try sandbox.run("\(destination)/usr/bin/rchat", ["--version"])
        XCTAssertEqual(version.status, 0, version.stderr)
        let completion = try sandbox.run("\(destination)/usr/bin/rchat", ["completion", "bash"]).stdout
        XCTAssertEqual(String(decoding: files["usr/share/bash-completion/completions/rchat-relay"] ?? Data(), as: UTF8.self), completion)

        let uninstall = try sandbox.run("/usr/bin/make", make + ["uninstall"])
        XCTAssertEqual(uninstall.status, 0, uninstall.stderr)
        XCTAssertEqual(sandbox.snapshot(destination), [:], "uninstall leaves no file behind")
    }
}
