import Foundation
import XCTest
import DesktopBusFixture
#if canImport(Glibc)
import Glibc
#endif

/// Every command line on this machine that contains one of `secrets`, as "PID: ARGS"
/// (`/proc/PID/cmdline`, which any local user may read), but those that contain `ignoring`
/// (the sender's `rchat send`, the test's own); processes gone meanwhile are skipped.
func commandLines(containing secrets: [String], ignoring: String? = nil) -> [String] {
    let needles = secrets.map { Data($0.utf8) }, ignored = ignoring.map { Data($0.utf8) }
    var found: [String] = []
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
        guard let cmdline = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
              needles.contains(where: { cmdline.range(of: $0) != nil }),
              ignored.map({ cmdline.range(of: $0) == nil }) ?? true else { continue }
        found.append("\(entry): " + String(decoding: cmdline.map { $0 == 0 ? 32 : $0 }, as: UTF8.self))
    }
    return found
}

/// The pids whose command line has every one of `parts`.
func processes(withCommandLine parts: [String]) -> [Int32] {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry -> Int32? in
        guard let pid = Int32(entry), let cmdline = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
        let args = cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        return parts.allSatisfy(args.contains) ? pid : nil
    }
}

/// Issue 27, finding 9: a desktop alert's title (the contact's name) and text (with "Name and
/// message") never appear in a command line, where any local user reads them for the hour
/// the alert waits to be clicked. They reach the desktop's notification service all the same.
final class AlertCommandLineTests: EngineTestCase {
    func testAnAlertsNameAndTextAreInNoCommandLine() throws {
        let desktop = try PrivateDesktop(directory: world.box.path("bus"))
        defer { desktop.stop() }
        let name = "Quillon" + String(UInt32.random(in: 100_000...999_999)), secret = "meet at pier \(UUID().uuidString.prefix(8))"

        try world.makeAccount("alice")
        try world.makeAccount("mallory", name: name)
        try world.add("alice", "mallory")
        try world.add("mallory", "alice")
        try world.startSync("mallory")
        try world.startSync("alice")
        let warmUp = try world.send("mallory", to: "Alice", "warm-up")
        try world.waitForStatus("mallory", "Alice", warmUp, "Delivered")
        world.stopSync("alice")
        let id = try world.send("mallory", to: "Alice", secret)
        try world.waitForStatus("mallory", "Alice", id, "Sent")
        try world.expectSuccess(world.box.rchat("alice", ["settings", "show-in-alerts", "message"]))
        try world.expectSuccess(world.box.rchat("alice", ["settings", "desktop-alerts", "on"]))
        XCTAssertEqual(commandLines(containing: [name, secret]), [], "nothing before the check")

        // Every command line, looked at again and again while the check runs and the alert is
        // shown: the check, whatever it starts, and whatever those start.
        let watcher = CommandLineWatcher(secrets: [name, secret])
        let env = ["DBUS_SESSION_BUS_ADDRESS": desktop.address, "DISPLAY": "", "WAYLAND_DISPLAY": ""]
        let check = try world.box.rchat("alice", ["check"], env: env)
        XCTAssertEqual(check.status, 0, check.stderr)
        try world.eventually("the alert reached the desktop", timeout: 15) { !desktop.notifications.isEmpty }
        let shown = desktop.notifications
        XCTAssertEqual(shown.map(\.title), [name])
        XCTAssertEqual(shown.map(\.body), [secret])
        XCTAssertEqual(shown.map(\.appName), ["rChat"])
        XCTAssertEqual(shown.map(\.actions), [["default", "Open"]], "clicking it opens the conversation")

        // The alert waits to be clicked, in the background, after the check ended.
        let home = world.box.path("alice-home")
        let waiting = processes(withCommandLine: ["notify", home])
        // Whatever happens, the process this test's check started ends with the test.
        defer { for pid in waiting where kill(pid, 0) == 0 { kill(pid, SIGKILL) } }
        XCTAssertEqual(waiting.count, 1, "the alert is waited for in the background")
        XCTAssertEqual(commandLines(containing: [name, secret]), [], "while the alert waits")
        XCTAssertEqual(watcher.stop(), [], "never, at any moment")

        // Dismissed: the wait ends.
        try desktop.service.dismiss(shown[0].id)
        try world.eventually("the waiting alert ended", timeout: 10) { processes(withCommandLine: ["notify", home]).isEmpty }

        // The same for a message arriving while `rchat sync` runs (started with this
        // process's environment: the private bus). The sender's `rchat send` has the text in
        // its command line, as its user typed it: not the alert's, not looked at.
        let saved = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]
        defer { if let saved { setenv("DBUS_SESSION_BUS_ADDRESS", saved, 1) } else { unsetenv("DBUS_SESSION_BUS_ADDRESS") } }
        setenv("DBUS_SESSION_BUS_ADDRESS", desktop.address, 1)
        let live = "the ferry at \(UUID().uuidString.prefix(8))"
        let sender = world.box.path("mallory-home")
        let liveWatcher = CommandLineWatcher(secrets: [name, live], ignoring: sender)
        try world.startSync("alice")
        let second = try world.send("mallory", to: "Alice", live)
        try world.waitForStatus("mallory", "Alice", second, "Delivered")
        try world.eventually("the live alert reached the desktop", timeout: 15) { desktop.notifications.count == 2 }
        XCTAssertEqual(desktop.notifications.last.map { [$0.title, $0.body] }, [name, live])
        let waitingLive = processes(withCommandLine: ["notify", home])
        defer { for pid in waitingLive where kill(pid, 0) == 0 { kill(pid, SIGKILL) } }
        XCTAssertEqual(waitingLive.count, 1)
        XCTAssertEqual(liveWatcher.stop(), [], "never, while sync ran and the alert waits")
        world.stopSync("alice")
        try desktop.service.dismiss(desktop.notifications[1].id)
        try world.eventually("the second waiting alert ended", timeout: 10) { processes(withCommandLine: ["notify", home]).isEmpty }
    }
}

extension AlertCommandLineTests {
    /// `rchat notify` takes the title and the text on standard input, one line each: anything
    /// else is one line on standard error and exit 2, and nothing is shown.
    func testNotifyRefusesInputThatIsNotATitleAndAText() throws {
        let desktop = try PrivateDesktop(directory: world.box.path("bus"))
        defer { desktop.stop() }
        try world.makeAccount("alice")
        for input in ["", "only a title\n", "a\nb\nc\n", "\ntext\n", "no line break"] {
            let run = try world.box.rchat("alice", ["notify"], env: ["DBUS_SESSION_BUS_ADDRESS": desktop.address], stdin: input)
            XCTAssertFailsCleanly(run, status: 2, mentions: "give the alert's title and text on standard input, one line each")
        }
        let big = try world.box.rchat("alice", ["notify"], env: ["DBUS_SESSION_BUS_ADDRESS": desktop.address],
                                      stdin: String(repeating: "x", count: 20_000) + "\ntext\n")
        XCTAssertFailsCleanly(big, status: 2, mentions: "one line each")
        XCTAssertEqual(desktop.notifications, [], "nothing shown")
    }

    /// An alert waiting to be clicked ends when the session bus goes away (the desktop
    /// session ended), not an hour later.
    func testAWaitingAlertEndsWithTheBus() throws {
        let desktop = try PrivateDesktop(directory: world.box.path("bus"))
        defer { desktop.stop() }
        try world.makeAccount("alice")
        let notify = Process()
        notify.executableURL = URL(fileURLWithPath: Binaries.path("rchat"))
        notify.arguments = ["notify", "--home", world.box.path("alice-home"), "--device-dir", world.box.path("alice-device")]
        notify.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SESSION_BUS_ADDRESS": desktop.address]) { $1 }
        let input = Pipe()
        notify.standardInput = input
        notify.standardOutput = FileHandle.nullDevice
        notify.standardError = FileHandle.nullDevice
        try notify.run()
        defer { if notify.isRunning { kill(notify.processIdentifier, SIGKILL) } }
        try input.fileHandleForWriting.write(contentsOf: Data("Sam\nNew message\n".utf8))
        try input.fileHandleForWriting.close()
        try world.eventually("the alert shown", timeout: 10) { desktop.notifications.count == 1 }
        XCTAssertEqual(desktop.notifications.map { [$0.title, $0.body] }, [["Sam", "New message"]])
        XCTAssertTrue(notify.isRunning, "waiting to be clicked")
        desktop.stop()
        try world.eventually("the wait ended with the bus", timeout: 10) { !notify.isRunning }
        XCTAssertEqual(notify.terminationStatus, 0)
    }
}

/// Looks at every command line again and again, on a thread of its own, until `stop`, which
/// gives those that contained one of the secrets.
final class CommandLineWatcher: @unchecked Sendable {
    private let lock = NSLock()
    private var found: Set<String> = []
    private var watching = true
    private var thread: Thread!

    init(secrets: [String], ignoring: String? = nil) {
        thread = Thread { [self] in
            while lock.withLock({ watching }) {
                let hits = commandLines(containing: secrets, ignoring: ignoring)
                if !hits.isEmpty { lock.withLock { found.formUnion(hits) } }
                usleep(2_000)
            }
        }
        thread.start()
    }

    func stop() -> [String] {
        lock.withLock { watching = false }
        while !thread.isFinished { usleep(1_000) }
        return lock.withLock { found.sorted() }
    }
}
