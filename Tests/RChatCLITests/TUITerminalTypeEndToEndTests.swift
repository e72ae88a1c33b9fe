import Foundation
import XCTest
import RChatSQL
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
            Self.glyph(of: "sent from the command line", in: $0) == "ⓥ"
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
        try warmedUpViews()

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
        linger.standardInput = FileHandle.nullDevice
        linger.standardOutput = FileHandle.nullDevice
        linger.standardError = FileHandle.nullDevice
        try linger.run()
        defer { if linger.isRunning { kill(linger.processIdentifier, SIGKILL) } }
        try world.eventually("the second linger started", timeout: 10) {
            FileManager.default.fileExists(atPath: self.world.box.path("sam-home/linger.pid"))
        }
        try screens.type(session("alice"), "nobody's terminal")
        try screen("alice", "Delivered to the linger") { Self.glyph(of: "nobody's terminal", in: $0) == "ⓥ" }
        try world.eventually("the alert kept", timeout: 10) {
            let db = try Database(path: self.world.box.path("sam-home/rchat.db"), readOnly: true)
            defer { db.close() }
            return try db.queryOne("SELECT value FROM settings WHERE key = 'owed_alerts'", [])?.string("value") == "Alice: New message"
        }
        try stopLinger("sam")
        try openView("sam")
        try screen("sam", "the kept alert shown at the next start") { $0.contains("While you were away: Alice: New message") }
        try screens.keys(session("sam"), "C-q")
        try screen("sam", "quit again") { $0.contains("[exited 0]") }
        try stopLinger("sam")
        try openView("sam")
        let again = try screen("sam", "the view again") { $0.contains("Alice") && $0.contains("Online") }
        XCTAssertFalse(again.contains("While you were away"), "shown once:\n\(again)")
    }
}
