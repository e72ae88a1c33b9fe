import Foundation
import XCTest
import RChatSQL
import DesktopBusFixture
#if canImport(Glibc)
import Glibc
#endif

extension TUIEndToEndTests {
    /// Issue 26: desktop alerts while the view runs but nobody sees it. A tmux session made
    /// with `new-session -d` has no client: the view in it is hidden, so with
    /// `alerts-while-open unfocused` (the default) a message in another conversation gives
    /// exactly one desktop alert (a notification service on a private bus records it), one in the
    /// conversation on screen none; with `off`, none.
    func testADetachedViewAlertsOnTheDesktopForOtherConversationsOnly() throws {
        let desktop = try recordingDesktop()
        defer { desktop.stop() }
        let env = desktop.env, calls = desktop.calls, alertsRecorded = desktop.alertsRecorded
        // Recorded before the view opens (Sam's first message alerted on the terminal).
        try aliceViewOnSamWithCarolElsewhere(settings: [("show-in-alerts", "message")], env: env, desktopAlerts: "on")
        let alertedBefore = try alertsRecorded()

        try world.send("sam", to: "Alice", "on screen")
        try screen("alice", "Sam's message in the open conversation") { Self.conversationLine("on screen", in: $0) != nil }
        try world.send("carol", to: "Alice", "from elsewhere")
        try screen("alice", "the banner for Carol") { $0.contains("Carol: from elsewhere") }
        try world.eventually("one desktop alert, for Carol", timeout: 10) { calls().count == 1 }
        XCTAssertEqual(calls()[0], "Carol from elsewhere")
        XCTAssertEqual(try alertsRecorded() - alertedBefore, 1, "recorded once, so the linger or a check never alerts it again")

        // Off: banners only. Read with the words setting, so the banner shows it was read.
        try changeAliceSettings([("alerts-while-open", "off"), ("show-in-alerts", "name")], dismissing: "Carol: from elsewhere")
        try world.send("carol", to: "Alice", "while off")
        try screen("alice", "the banner, with the settings read again") { $0.contains("Carol: New message") }
        // Always: a desktop alert again; had `off` let one through, it would come first.
        try changeAliceSettings([("alerts-while-open", "always"), ("show-in-alerts", "message")], dismissing: "Carol: New message")
        try world.send("carol", to: "Alice", "always")
        try screen("alice", "the banner for the last one") { $0.contains("Carol: always") }
        try world.eventually("the second desktop alert", timeout: 10) { calls().count >= 2 }
        XCTAssertEqual(calls().count, 2, "\(calls())")
        XCTAssertEqual(calls()[1], "Carol always")
        XCTAssertEqual(try alertsRecorded() - alertedBefore, 2)
        XCTAssertFalse(calls().joined().contains("on screen"), "never the conversation on screen")
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
        try stopLinger("alice")
    }
}

extension TUIEndToEndTests {
    /// A desktop for the view: a private session bus with a notification service on it,
    /// which records each alert as "TITLE TEXT" (`calls`) and is never clicked (`stop` ends
    /// both); `alertsRecorded`: the alerts Alice's store recorded.
    func recordingDesktop() throws -> (env: [String: String], calls: () -> [String], alertsRecorded: () throws -> Int, stop: () -> Void) {
        let desktop = try PrivateDesktop(directory: world.box.path("bus"))
        let env = Self.utf8.merging(["DBUS_SESSION_BUS_ADDRESS": desktop.address]) { $1 }
        let calls = { desktop.notifications.map { "\($0.title) \($0.body)" } }
        let home = world.box.path("alice-home")
        let alertsRecorded = { () throws -> Int in
            let db = try Database(path: "\(home)/rchat.db", readOnly: true)
            defer { db.close() }
            return Int(try XCTUnwrap(try db.queryOne("SELECT COUNT(*) AS n FROM alerts", [])).int64("n"))
        }
        return (env, calls, alertsRecorded, desktop.stop)
    }

    /// Changes Alice's settings while her view runs, and dismisses the banner showing
    /// `banner` (any key), so the next banner is worded by the settings the view read again.
    func changeAliceSettings(_ settings: [(String, String)], dismissing banner: String) throws {
        for (key, value) in settings { try world.expectSuccess(world.box.rchat("alice", ["settings", key, value])) }
        try screens.keys(session("alice"), "x", "BSpace")
        try screen("alice", "the banner gone") { !$0.contains(banner) }
    }

    /// With a client attached to the view's tmux session it is seen: no desktop alert with
    /// `unfocused`, until the terminal reports that its window lost focus (`ESC [ O`, sent
    /// here as the terminal would); `ESC [ I` and it is seen again. Focus reports are never
    /// typed into the composer.
    func testAnAttachedViewAlertsOnTheDesktopOnlyWhileItsWindowLostFocus() throws {
        let desktop = try recordingDesktop()
        defer { desktop.stop() }
        try aliceViewOnSamWithCarolElsewhere(settings: [("show-in-alerts", "message")], env: desktop.env, desktopAlerts: "on")
        let alertedBefore = try desktop.alertsRecorded()
        // A client in a session of its own on the same server (TMUX unset: not nested).
        try screens.open("viewer-\(screens.server)", ["env", "-u", "TMUX", TmuxScreens.executable!, "-S", screens.socket, "-f", "/dev/null",
                                                    "attach", "-t", session("alice")], env: Self.utf8)
        try world.eventually("a client attached to Alice's session", timeout: 10) {
            try self.screens.tmux(["display-message", "-p", "-t", self.session("alice"), "#{session_attached}"]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines) == "1"
        }
        try world.send("carol", to: "Alice", "seen")
        try screen("alice", "the banner for Carol") { $0.contains("Carol: seen") }

        try screens.tmux(["send-keys", "-t", session("alice"), "-H", "1b", "5b", "4f"])   // ESC [ O
        try world.send("carol", to: "Alice", "unseen")
        try screen("alice", "the next banner") { $0.contains("Carol: 2 new messages") }
        try world.eventually("one desktop alert, for the message while focus was lost", timeout: 10) { desktop.calls().count == 1 }
        XCTAssertEqual(desktop.calls()[0], "Carol unseen")

        try screens.tmux(["send-keys", "-t", session("alice"), "-H", "1b", "5b", "49"])   // ESC [ I
        try world.send("carol", to: "Alice", "seen again")
        try screen("alice", "the banner after focus came back") { $0.contains("Carol: 3 new messages") }
        // `always` as a barrier: had the one seen again alerted, it would come first.
        try changeAliceSettings([("alerts-while-open", "always"), ("show-in-alerts", "name")], dismissing: "Carol: 3 new messages")
        try world.send("carol", to: "Alice", "always")
        try screen("alice", "the last banner, with the settings read again") { $0.contains("Carol: New message") }
        try world.eventually("the desktop alert with always", timeout: 10) { desktop.calls().count >= 2 }
        XCTAssertEqual(desktop.calls(), ["Carol unseen", "Carol New message"])
        XCTAssertEqual(try desktop.alertsRecorded() - alertedBefore, 2)
        let last = try screens.capture(session("alice"))
        XCTAssertFalse(last.contains("[O") || last.contains("[I"), "focus reports never typed:\n\(last)")
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "quit cleanly") { $0.contains("[exited 0]") }
        try stopLinger("alice")
    }
}

extension TUIEndToEndTests {
    /// Focus reporting (`ESC [ ? 1004 h`, what `unfocused` and Read receipts rely on) is on
    /// while the view runs and off again when a signal ends it, with the rest of the
    /// terminal restored: the bytes the view wrote, recorded by `script` in a tmux pane.
    func testFocusReportingIsTurnedOnAndOffAgainWhenASignalEndsTheView() throws {
        try world.makePair("alice", "sam")
        try world.expectSuccess(world.box.rchat("alice", ["settings", "desktop-alerts", "off"]))
        let typescript = world.box.path("view.typescript")
        let view = [Binaries.path("rchat"), "--home", world.box.path("alice-home"), "--device-dir", world.box.path("alice-device")]
        try screens.open(session("alice"), ["script", "-q", "-f", "-c", view.map(TmuxScreens.quote).joined(separator: " "), typescript],
                         env: Self.utf8)
        try screen("alice", "the view") { $0.contains("Sam") && $0.contains("Online") }
        func written() -> String { (try? String(contentsOfFile: typescript, encoding: .utf8)) ?? "" }
        XCTAssertTrue(written().contains("\u{1B}[?1004h"), "focus reporting on")
        XCTAssertFalse(written().contains("\u{1B}[?1004l"))

        // The view itself (not `script`), by its PID: the one whose arguments are `view`.
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) } == view
        }
        XCTAssertEqual(pids.count, 1, "\(pids)")
        let pid = try XCTUnwrap(pids.first)
        kill(pid, SIGTERM)
        try screen("alice", "the view ended by the signal") { $0.contains("[exited 0]") }
        try world.eventually("focus reporting off after it was on", timeout: 10) {
            let text = written()
            guard let on = text.range(of: "\u{1B}[?1004h", options: .backwards),
                  let off = text.range(of: "\u{1B}[?1004l", options: .backwards) else { return false }
            return on.upperBound <= off.lowerBound && text.contains("\u{1B}[?2004l")
        }
        try stopLinger("alice")
    }
}
