import Foundation
import XCTest
import RChatSQL
import DesktopBusFixture
#if canImport(Glibc)
import Glibc
#endif

/// The view on terminals that are not xterm, and job control: real views in tmux.
extension TUIEndToEndTests {
    /// `dumb` cannot place the cursor: one clear line and exit 1, never a collapsed screen.
    /// vt100 and the Linux console get a usable screen, and no last frame is left over the
    /// shell when the view quits (they have no alternate screen to take it away).
    func testTerminalTypesGetAUsableScreenOrOneClearLine() throws {
        try world.makePair("alice", "sam")
        try openView("alice", env: ["LANG": "C.UTF-8", "TERM": "dumb"])
        let dumb = try screen("alice", "dumb refused") { $0.contains("[exited 1]") }
        let said = dumb.screenLines.filter { !$0.isEmpty }.dropLast().joined()
        XCTAssertTrue(said.hasPrefix("rchat: the terminal type 'dumb' cannot place text on the screen"), dumb)
        XCTAssertTrue(said.contains("rchat --help"), dumb)

        for term in ["vt100", "linux"] {
            try openView("alice", env: ["LANG": "C.UTF-8", "TERM": term])
            try screen("alice", "\(term): the list and the status bar") { s in
                s.contains("Sam") && (s.contains("Online") || s.contains("Connecting")) && s.screenLines.contains { $0.hasPrefix("›") }
            }
            try screens.keys(session("alice"), "C-q")
            let after = try screen("alice", "\(term): quit") { $0.contains("[exited 0]") }
            XCTAssertEqual(after.screenLines.filter { !$0.isEmpty }, ["[exited 0]"], "\(term): nothing left over the shell")
        }
    }

    /// Ctrl-Z gives the terminal back to the shell (the job is Stopped); `fg` brings the view
    /// back, drawn whole, and it goes on working.
    func testCtrlZSuspendsAndFgResumes() throws {
        try world.makePair("alice", "sam")
        try world.expectSuccess(world.box.rchat("alice", ["settings", "desktop-alerts", "off"]))
        let command = [Binaries.path("rchat"), "--home", world.box.path("alice-home"),
                       "--device-dir", world.box.path("alice-device")].map(TmuxScreens.quote).joined(separator: " ")
        try screens.open(session("alice"), ["bash", "--norc", "--noprofile", "-i"],
                         env: Self.utf8.merging(["PS1": "shell$ "]) { $1 })
        try screen("alice", "a shell prompt") { $0.contains("shell$") }
        try screens.type(session("alice"), command)
        try screen("alice", "the view") { $0.contains("Sam") && $0.contains("Online") }
        try screens.keys(session("alice"), "C-z")
        let atPrompt = { (s: String) in s.screenLines.last(where: { !$0.isEmpty })?.trimmingCharacters(in: .whitespaces) == "shell$" }
        let stopped = try screen("alice", "back at the shell, the job stopped") { $0.contains("Stopped") && atPrompt($0) }
        XCTAssertFalse(stopped.contains("› "), "the view's frame is gone:\n\(stopped)")
        try screens.type(session("alice"), "fg")
        try screen("alice", "the view back, whole") { s in
            s.contains("Sam") && s.contains("Online") && !s.contains("shell$") && s.screenLines.contains { $0.hasPrefix("›") }
        }
        try screens.keys(session("alice"), "Enter")
        try screens.type(session("alice"), "after fg")
        try screen("alice", "a message written after resuming") { Self.conversationLine("after fg", in: $0) != nil }
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit to the shell") { atPrompt($0) && !$0.contains("Online") }
    }
}

extension TUIEndToEndTests {
    /// Commands run beside the view show on its screen within a moment, through the local
    /// wake-up: a message sent with `rchat send`, a contact added with `rchat add`, a block.
    func testCommandsRunBesideTheViewShowAtOnce() throws {
        try world.makePair("alice", "sam")
        try world.makeAccount("lee")
        try openView("sam")
        try openView("alice")
        try screen("alice", "the list with Sam") { $0.contains("Sam") && $0.contains("Online") }
        try screens.keys(session("alice"), "Enter")
        try screen("alice", "Sam's conversation") { $0.contains("Message Sam") }

        try world.expectSuccess(world.box.rchat("alice", ["send", "Sam", "sent from the command line"]))
        try screen("alice", "the message sent by the command, in the open conversation, Delivered", seconds: 5) {
            Self.glyph(of: "sent from the command line", in: $0) == Self.shown(.delivered)
        }
        try world.expectSuccess(world.box.rchat("alice", ["add", try world.code("lee"), "--name", "Lee"]))
        try screen("alice", "Lee in the list", seconds: 5) { $0.screenLines.contains { $0.contains("Lee") } }
        try world.expectSuccess(world.box.rchat("alice", ["block", "Sam"]))
        try screen("alice", "Sam blocked", seconds: 5) { $0.contains("is blocked; /unblock to write again") }
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
    }
}

extension TUIEndToEndTests {
    /// After the view quits, the linger writes alerts to the terminal the view ran in
    /// (desktop alerts are off); a linger whose terminal is gone keeps them, and the next
    /// view shows them once.
    func testTheLingerAlertsOnItsTerminalOrKeepsTheAlertForTheNextStart() throws {
        try lingerAlertsOnItsTerminalOrKeepsThem(desktopAlerts: "off")
    }

    /// Issue 26: the same with desktop alerts on where there is no desktop (no session bus,
    /// no display): never to the linger's standard error, which goes nowhere.
    func testWithoutADesktopTheLingerAlertsOnItsTerminalOrKeepsTheAlert() throws {
        try lingerAlertsOnItsTerminalOrKeepsThem(desktopAlerts: "on")
    }

    /// An environment without a desktop: no session bus (neither the variable nor
    /// `$XDG_RUNTIME_DIR/bus`), no display.
    func noDesktop() throws -> [String: String] {
        let runtime = world.box.path("no-desktop-runtime")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        return ["DISPLAY": "", "WAYLAND_DISPLAY": "", "DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": runtime]
    }

    private func lingerAlertsOnItsTerminalOrKeepsThem(desktopAlerts: String) throws {
        let desktop = try noDesktop()
        try warmedUpViews(samEnv: Self.utf8.merging(desktop) { $1 }, samDesktopAlerts: desktopAlerts)

        try screens.keys(session("sam"), "C-q")
        try screen("sam", "Sam's view quit") { $0.contains("[exited 0]") }
        try world.eventually("Sam's linger started", timeout: 10) {
            FileManager.default.fileExists(atPath: self.world.box.path("sam-home/linger.pid"))
        }
        try screens.type(session("alice"), "while you linger")
        try screen("sam", "the alert on the terminal Sam's view ran in") { $0.contains("Alice: New message") }
        try stopLinger("sam")

        // A linger whose terminal is gone: the alert is kept for the next start.
        let linger = Process()
        linger.executableURL = URL(fileURLWithPath: Binaries.path("rchat"))
        linger.arguments = ["linger", "--tty", "/dev/pts/999999", "--home", world.box.path("sam-home"),
                            "--device-dir", world.box.path("sam-device")]
        linger.environment = ProcessInfo.processInfo.environment.merging(desktop) { $1 }
        linger.standardInput = FileHandle.nullDevice
        linger.standardOutput = FileHandle.nullDevice
        linger.standardError = FileHandle.nullDevice
        try linger.run()
        defer { if linger.isRunning { kill(linger.processIdentifier, SIGKILL) } }
        try world.eventually("the second linger started", timeout: 10) {
            FileManager.default.fileExists(atPath: self.world.box.path("sam-home/linger.pid"))
        }
        try screens.type(session("alice"), "nobody's terminal")
        try screen("alice", "Delivered to the linger") { Self.glyph(of: "nobody's terminal", in: $0) == Self.shown(.delivered) }
        try world.eventually("the alert kept", timeout: 10) {
            let db = try Database(path: self.world.box.path("sam-home/rchat.db"), readOnly: true)
            defer { db.close() }
            return try db.queryOne("SELECT value FROM settings WHERE key = 'owed_alerts'", [])?.string("value") == "Alice: New message"
        }
        try stopLinger("sam")
        try openView("sam", env: Self.utf8.merging(desktop) { $1 }, desktopAlerts: desktopAlerts)
        try screen("sam", "the kept alert shown at the next start") { $0.contains("While you were away: Alice: New message") }
        try screens.keys(session("sam"), "C-q")
        try screen("sam", "quit again") { $0.contains("[exited 0]") }
        try stopLinger("sam")
        try openView("sam", env: Self.utf8.merging(desktop) { $1 }, desktopAlerts: desktopAlerts)
        let again = try screen("sam", "the view again") { $0.contains("Alice") && $0.contains("Online") }
        XCTAssertFalse(again.contains("While you were away"), "shown once:\n\(again)")
    }
}

extension TUIEndToEndTests {
    /// A `PrivateDesktop` for every process this test starts (the variables are set here;
    /// the caller puts them back), named in `DBUS_SESSION_BUS_ADDRESS`, and a stand-in
    /// terminal in `TERMINAL` that records what it was asked to run (`BIN/terminal-args`).
    func testDesktop() throws -> (desktop: PrivateDesktop, bin: String) {
        let bin = world.box.path("fake-desktop")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try """
        #!/bin/sh
        printf '%s\\n' "$@" > "\(bin)/part-terminal" && mv "\(bin)/part-terminal" "\(bin)/terminal-args"
        """.write(toFile: "\(bin)/fake-terminal", atomically: true, encoding: .utf8)
        chmod("\(bin)/fake-terminal", 0o755)
        let desktop = try PrivateDesktop(directory: world.box.path("bus"))
        setenv("PATH", bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"), 1)
        setenv("DBUS_SESSION_BUS_ADDRESS", desktop.address, 1)
        setenv("TERMINAL", "fake-terminal", 1)
        return (desktop, bin)
    }

    /// Clicking an alert opens its conversation: in a new terminal running the view when no
    /// view runs, in the running view when one does. The alert says only whose it is, and
    /// no command line names the contact (the view is asked through the store).
    func testClickingAnAlertOpensItsConversation() throws {
        let saved: [(String, String?)] = ["PATH", "DBUS_SESSION_BUS_ADDRESS", "TERMINAL"].map { key in
            (key, ProcessInfo.processInfo.environment[key])
        }
        defer { for (key, value) in saved { if let value { setenv(key, value, 1) } else { unsetenv(key) } } }
        let (desktop, bin) = try testDesktop()
        defer { desktop.stop() }
        try world.makePair("alice", "sam")
        try world.expectSuccess(world.box.rchat("sam", ["settings", "desktop-alerts", "on"]))
        try world.startSync("sam")
        try world.startSync("alice")
        let first = try world.send("alice", to: "Sam", "secret plans")
        try world.waitForStatus("alice", "Sam", first, "Delivered", timeout: 20)
        try world.eventually("the alert shown", timeout: 10) { desktop.service.notifications.count == 1 }
        let alert = desktop.service.notifications[0]
        XCTAssertEqual([alert.appName, alert.title, alert.body], ["rChat", "Alice", "New message"])
        XCTAssertEqual(alert.actions, ["default", "Open"])

        // No view runs: the click opens a terminal with the view, which opens Alice's
        // conversation (never opened before: the click's request, taken at its start).
        world.stopSync("sam")
        try desktop.service.click(alert.id)
        try world.eventually("a terminal asked for", timeout: 10) { FileManager.default.fileExists(atPath: "\(bin)/terminal-args") }
        let args = try String(contentsOfFile: "\(bin)/terminal-args", encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(args.first, "-e")
        XCTAssertEqual(Array(args.dropFirst()), [Binaries.path("rchat"), "--home", world.box.path("sam-home"),
                                                 "--device-dir", world.box.path("sam-device")], "never the contact's name")
        try screens.open(session("sam"), Array(args.dropFirst()), env: Self.utf8)
        try screen("sam", "the view the click asked for, on Alice") { $0.screenLines.first?.contains("rChat · Alice") ?? false }
        try screens.keys(session("sam"), "C-q")
        try screen("sam", "quit") { $0.contains("[exited 0]") }
        try stopLinger("sam")
        // The next start would reopen Alice's conversation: as if the view had quit on the list.
        try world.expectSuccess(world.box.rchat("sam", ["settings", "desktop-alerts", "on"]))
        do {
            let db = try Database(path: world.box.path("sam-home/rchat.db"))
            defer { db.close() }
            try db.execute("DELETE FROM settings WHERE key = 'last_open_conversation'")
        }

        // A view runs: the click brings the conversation to its front, and no terminal opens.
        try FileManager.default.removeItem(atPath: "\(bin)/terminal-args")
        try world.startSync("sam")
        let second = try world.send("alice", to: "Sam", "again")
        try world.waitForStatus("alice", "Sam", second, "Delivered", timeout: 20)
        try world.eventually("the second alert shown", timeout: 10) { desktop.service.notifications.count == 2 }
        world.stopSync("sam")
        try openView("sam")
        try screen("sam", "the list") { $0.contains("Alice") && $0.screenLines.first?.trimmingCharacters(in: .whitespaces) == "rChat" }
        try desktop.service.click(desktop.service.notifications[1].id)
        try screen("sam", "Alice's conversation opened by the click") { $0.screenLines.first?.contains("rChat · Alice") ?? false }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(bin)/terminal-args"))
        try screens.keys(session("sam"), "C-q")
        try screen("sam", "quit") { $0.contains("[exited 0]") }
    }
}

extension TUIEndToEndTests {
    /// `rchat --open NAME` (what a clicked alert runs) opens the view on that conversation;
    /// an unknown name is one line and exit 2.
    func testOpenNameStartsTheViewOnThatConversation() throws {
        try world.makePair("alice", "sam")
        try world.expectSuccess(world.box.rchat("sam", ["settings", "desktop-alerts", "off"]))
        let view = [Binaries.path("rchat"), "--home", world.box.path("sam-home"), "--device-dir", world.box.path("sam-device")]
        try screens.open(session("sam"), view + ["--open", "alice"], env: Self.utf8)
        try screen("sam", "Alice's conversation open") { $0.screenLines.first?.contains("rChat · Alice") ?? false }
        try screens.keys(session("sam"), "C-q")
        try screen("sam", "quit") { $0.contains("[exited 0]") }
        try stopLinger("sam")
        let unknown = try world.box.rchat("sam", ["--open", "Nobody"])
        XCTAssertFailsCleanly(unknown, status: 2, mentions: "no contact named Nobody")
    }
}
