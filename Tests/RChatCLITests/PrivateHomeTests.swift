import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A home or device directory that is not private (issue 27, finding 10): the user's own
/// but open to others is tightened to 0700 before use; another user's is refused in one
/// line, exit 1, nothing written; nothing in the home is opened through a planted link.
/// Real `rchat` processes; the view in tmux.
final class PrivateHomeTests: XCTestCase {
    var box: Sandbox!
    var screens: TmuxScreens?
    var home: String { box.path("alice-home") }
    var device: String { box.path("alice-device") }

    override func setUpWithError() throws {
        box = try Sandbox()
    }

    override func tearDown() {
        screens?.closeAll()
        screens = nil
        box = nil
    }

    func mode(_ path: String) -> Int? { box.mode(path).map { $0 & 0o777 } }

    func eventually(_ what: String, seconds: Double = 10, _ condition: () -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !condition() {
            guard Date() < deadline else { throw TimedOut(what: what, seconds: seconds, context: "") }
            waitUntilDeadline(min(deadline, Date(timeIntervalSinceNow: 0.03)))
        }
    }

    func testALooseHomeAndDeviceDirectoryOfYourOwnAreTightenedByEveryCommand() throws {
        try box.accounts(["alice"])
        for args in [["contacts"], ["sync", "--seconds", "1"]] {
            XCTAssertEqual(chmod(home, 0o777), 0)
            XCTAssertEqual(chmod(device, 0o777), 0)
            _ = try box.rchat("alice", args)
            XCTAssertEqual(mode(home), 0o700, "rchat \(args[0]) left the home open to others")
            XCTAssertEqual(mode(device), 0o700, "rchat \(args[0]) left the device directory open to others")
        }
    }

    func testAHomeOrDeviceDirectoryOfAnotherUserIsRefusedAndNothingIsWritten() throws {
        try XCTSkipIf(geteuid() != 0, "needs root to give a directory to another user")
        // A new home given to another user: `rchat init` writes nothing there.
        XCTAssertEqual(mkdir(home, 0o700), 0)
        XCTAssertEqual(chown(home, 65534, 65534), 0)
        let initRun = try box.rchat("alice", ["init", "--name", "Alice", "--relay", offlineRelay])
        XCTAssertFailsCleanly(initRun, status: 1, mentions: "another user")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: home), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: device), "a device key was made for a refused home")
        XCTAssertEqual(mode(home), 0o700)
        XCTAssertEqual(rmdir(home), 0)

        // An account's home and device directory given to another user afterwards.
        try box.accounts(["alice"])
        for directory in [home, device] {
            XCTAssertEqual(chown(directory, 65534, 65534), 0)
            XCTAssertEqual(chmod(directory, 0o777), 0)
            let before = box.snapshot(home).merging(box.snapshot(device).map { ("device/\($0)", $1) }) { a, _ in a }
            for args in [["contacts"], ["sync", "--seconds", "1"], ["code"]] {
                let run = try box.rchat("alice", args)
                XCTAssertFailsCleanly(run, status: 1, mentions: "belongs to another user")
                XCTAssertTrue(run.stderr.contains(directory), run.stderr)
            }
            let after = box.snapshot(home).merging(box.snapshot(device).map { ("device/\($0)", $1) }) { a, _ in a }
            XCTAssertEqual(after, before, "a refused command changed the files")
            XCTAssertEqual(mode(directory), 0o777, "another user's directory is not ours to change")
            XCTAssertEqual(chown(directory, 0, 0), 0)
            XCTAssertEqual(chmod(directory, 0o700), 0)
        }
    }

    func testASymlinkedDatabaseIsRefused() throws {
        try box.accounts(["alice"])
        let elsewhere = box.path("elsewhere.db")
        try FileManager.default.moveItem(atPath: "\(home)/rchat.db", toPath: elsewhere)
        XCTAssertEqual(symlink(elsewhere, "\(home)/rchat.db"), 0)
        let before = FileManager.default.contents(atPath: elsewhere)
        let run = try box.rchat("alice", ["contacts"])
        XCTAssertFailsCleanly(run, status: 1, mentions: "symbolic link")
        XCTAssertEqual(FileManager.default.contents(atPath: elsewhere), before)
    }

    func testASymlinkedDeviceKeyIsRefused() throws {
        try box.accounts(["alice"])
        let elsewhere = box.path("elsewhere.key")
        try FileManager.default.moveItem(atPath: "\(device)/device.key", toPath: elsewhere)
        XCTAssertEqual(symlink(elsewhere, "\(device)/device.key"), 0)
        let before = box.snapshot(home)
        XCTAssertFailsCleanly(try box.rchat("alice", ["code"]), status: 1, mentions: "symbolic link")
        XCTAssertEqual(box.snapshot(home), before)
    }

    /// Another user's symlink at view.log (planted before the home was made private) is
    /// removed, never written through; a loose home is tightened by the view too.
    func testTheViewNeverWritesItsLogThroughALinkAndTightensItsHome() throws {
        try XCTSkipIf(TmuxScreens.executable == nil, "tmux is not installed (make deps installs it)")
        try box.accounts(["alice"])
        let target = box.path("bashrc")
        let precious = Data("export PATH=/usr/bin\n".utf8)
        try precious.write(to: URL(fileURLWithPath: target))
        XCTAssertEqual(symlink(target, "\(home)/view.log"), 0)
        XCTAssertEqual(chmod(home, 0o777), 0)
        let screens = TmuxScreens(box: box)
        self.screens = screens
        let session = "alice-\(screens.server)"
        try screens.open(session, [Binaries.path("rchat"), "--home", home, "--device-dir", device],
                         env: ["LANG": "C.UTF-8", "TERM": "xterm-256color"])
        try screens.screenUntilDeadline(session, "the view is up") { $0.contains("F1 help") }
        XCTAssertEqual(FileManager.default.contents(atPath: target), precious, "the view wrote through the link at view.log")
        XCTAssertEqual(mode(home), 0o700)
        var st = stat()
        XCTAssertEqual(lstat("\(home)/view.log", &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFREG, "view.log is a file of the home's own")
        try screens.keys(session, "C-q")
        try screens.screenUntilDeadline(session, "the view quit") { $0.contains("[exited 0]") }
        // The view left a linger behind: stopped by its pid, as it removes its pid file.
        let pidFile = "\(home)/linger.pid"
        try eventually("the linger started") { FileManager.default.fileExists(atPath: pidFile) }
        if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
           let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGTERM)
            try eventually("the linger ended") { !FileManager.default.fileExists(atPath: pidFile) || kill(pid, 0) != 0 }
        }
        XCTAssertEqual(FileManager.default.contents(atPath: target), precious)
    }
}
