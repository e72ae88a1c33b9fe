import Foundation
import XCTest
import RChatCore

final class AccountCommandTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws { box = try Sandbox() }
    override func tearDown() { box = nil }

    func initAccount(_ person: String, name: String? = nil, device: String? = nil) throws {
        let run = try box.rchat(person, ["init", "--name", name ?? person.capitalized, "--relay", offlineRelay], device: device)
        XCTAssertEqual(run.status, 0, run.stderr)
    }

    func testInitCreatesPrivateFilesAndACode() throws {
        try initAccount("alice")
        let home = box.path("alice-home"), device = box.path("alice-device")
        XCTAssertEqual(box.mode(home), 0o700)
        XCTAssertEqual(box.mode(device), 0o700)
        XCTAssertEqual(box.mode("\(device)/device.key"), 0o600)
        XCTAssertEqual(box.mode("\(home)/rchat.db"), 0o600)
        let tag = try String(contentsOfFile: "\(home)/CACHEDIR.TAG", encoding: .utf8)
        XCTAssertTrue(tag.hasPrefix("Signature: 8a477f597d28d172789f06886806bc55"))

        let code = try box.rchat("alice", ["code"])
        XCTAssertEqual(code.status, 0)
        XCTAssertEqual(code.lines.count, 1)
        let parsed = try ContactCode(parsing: code.lines[0])
        XCTAssertEqual(parsed.name, "Alice")
        XCTAssertEqual(parsed.relay.description, offlineRelay)
        // The code is stable: same keys every time.
        XCTAssertEqual(try box.rchat("alice", ["code"]).stdout, code.stdout)
    }

    func testInitTwiceChangesNothing() throws {
        try initAccount("alice")
        let before = box.snapshot(box.path("alice-home"))
        let again = try box.rchat("alice", ["init", "--name", "Other", "--relay", offlineRelay])
        XCTAssertFailsCleanly(again, status: 1, mentions: "already exists")
        XCTAssertEqual(box.snapshot(box.path("alice-home")), before)
    }

    func testUsageErrors() throws {
        XCTAssertFailsCleanly(try box.rchat("a", ["init", "--name", "A"]), status: 2, mentions: "--relay")
        XCTAssertFailsCleanly(try box.rchat("a", ["init", "--name", "A", "--relay", "nonsense"]), status: 2, mentions: "relay address")
        XCTAssertFailsCleanly(try box.rchat("a", ["init", "--name", "", "--relay", offlineRelay]), status: 2, mentions: "name")
        XCTAssertFailsCleanly(try box.rchat("a", ["init", "--bogus"]), status: 2, mentions: "unknown option")
        XCTAssertFailsCleanly(try box.rchat("a", ["frobnicate"]), status: 2, mentions: "unknown command")
        XCTAssertFailsCleanly(try box.rchat("a", ["code"]), status: 1, mentions: "no account")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("a-home/rchat.db")))
    }

    func testHelpForEveryCommand() throws {
        for command in [["init"], ["code"], ["add"], ["contacts"], ["account", "export"]] {
            let run = try box.run(Binaries.path("rchat"), command + ["--help"])
            XCTAssertEqual(run.status, 0, "\(command)")
            XCTAssertTrue(run.stdout.hasPrefix("usage: rchat \(command.joined(separator: " "))"), run.stdout)
            XCTAssertTrue(run.stdout.contains("--device-dir"))
        }
        let top = try box.run(Binaries.path("rchat"), ["--help"])
        XCTAssertEqual(top.status, 0)
        XCTAssertTrue(top.stdout.contains("rchat add CODE"))
    }

    func testExportAndImportRestoresAccountAndContacts() throws {
        try initAccount("alice")
        try initAccount("sam")
        let samCode = try box.rchat("sam", ["code"]).lines[0]
        XCTAssertEqual(try box.rchat("alice", ["add", samCode]).status, 0)
        let aliceCode = try ContactCode(parsing: try box.rchat("alice", ["code"]).lines[0])

        let file = box.path("alice.backup")
        let export = try box.rchat("alice", ["account", "export", file], env: ["RCHAT_PASSPHRASE": "pass phrase"])
        XCTAssertEqual(export.status, 0, export.stderr)
        XCTAssertEqual(box.mode(file), 0o600)
        let exported = try Data(contentsOf: URL(fileURLWithPath: file))
        XCTAssertNil(exported.range(of: Data("Sam".utf8)), "the export is sealed, names included")

        // Refuses to overwrite.
        XCTAssertFailsCleanly(try box.rchat("alice", ["account", "export", file], env: ["RCHAT_PASSPHRASE": "x"]), status: 2, mentions: "exists")

        // Wrong passphrase: nothing is created.
        let wrong = try box.rchat("restored", ["init", "--import", file], env: ["RCHAT_PASSPHRASE": "wrong"], device: "alice-device")
        XCTAssertFailsCleanly(wrong, status: 1, mentions: "passphrase")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("restored-home/rchat.db")))

        // Reinstall: new home, same device directory.
        let restore = try box.rchat("restored", ["init", "--import", file], env: ["RCHAT_PASSPHRASE": "pass phrase"], device: "alice-device")
        XCTAssertEqual(restore.status, 0, restore.stderr)
        let restoredCode = try ContactCode(parsing: try box.rchat("restored", ["code"], device: "alice-device").lines[0])
        XCTAssertEqual(restoredCode.accountKey, aliceCode.accountKey)
        XCTAssertEqual(restoredCode.deviceKey, aliceCode.deviceKey)
        XCTAssertEqual(restoredCode.inviteToken, aliceCode.inviteToken)
        let contacts = try box.rchat("restored", ["contacts", "--json"], device: "alice-device")
        XCTAssertEqual(contacts.lines, [#"{"name":"Sam","state":"ok","unread":0,"timer":"off"}"#])

        // New phone: new home, new device directory — same account, new device key.
        let moved = try box.rchat("newphone", ["init", "--import", file], env: ["RCHAT_PASSPHRASE": "pass phrase"])
        XCTAssertEqual(moved.status, 0, moved.stderr)
        let movedCode = try ContactCode(parsing: try box.rchat("newphone", ["code"]).lines[0])
        XCTAssertEqual(movedCode.accountKey, aliceCode.accountKey)
        XCTAssertNotEqual(movedCode.deviceKey, aliceCode.deviceKey)

        // Importing over an existing account changes nothing.
        let before = box.snapshot(box.path("sam-home"))
        let over = try box.rchat("sam", ["init", "--import", file], env: ["RCHAT_PASSPHRASE": "pass phrase"])
        XCTAssertFailsCleanly(over, status: 1, mentions: "already exists")
        XCTAssertEqual(box.snapshot(box.path("sam-home")), before)

        // Not an export at all.
        try Data("hello".utf8).write(to: URL(fileURLWithPath: box.path("junk")))
        XCTAssertFailsCleanly(try box.rchat("j", ["init", "--import", box.path("junk")], env: ["RCHAT_PASSPHRASE": "x"]), status: 1, mentions: "export")
    }

    /// A hostile export asking Argon2 for 4 GiB is refused from its header: before the
    /// passphrase is even asked for, so before anything could be derived.
    func testExportAskingForAHugeKeyDerivationCostIsRefusedBeforeAnyDerivation() throws {
        try initAccount("alice")
        let file = box.path("alice.backup"), hostile = box.path("hostile.backup")
        let pass = ["RCHAT_PASSPHRASE": "pass phrase"]
        XCTAssertEqual(try box.rchat("alice", ["account", "export", file], env: pass).status, 0)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        // Layout: "RCHATEXP1" (9) ‖ salt (16) ‖ opslimit (u64) ‖ memlimit (u64, big-endian).
        bytes.replaceSubrange(33..<41, with: [0, 0, 0, 1, 0, 0, 0, 0])   // 4 GiB
        try bytes.write(to: URL(fileURLWithPath: hostile))

        // No passphrase anywhere (no RCHAT_PASSPHRASE, no terminal): still the cost is what
        // is refused, so nothing was derived.
        let bare = try box.rchat("restored", ["init", "--import", hostile])
        XCTAssertFailsCleanly(bare, status: 1, mentions: "key-derivation cost")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("restored-home")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("restored-device")))

        // With the passphrase: refused the same, in less time than one real import takes.
        var started = Date()
        XCTAssertFailsCleanly(try box.rchat("restored", ["init", "--import", hostile], env: pass), status: 1, mentions: "key-derivation cost")
        let refusal = Date().timeIntervalSince(started)
        started = Date()
        let real = try box.rchat("restored", ["init", "--import", file], env: pass)
        let genuine = Date().timeIntervalSince(started)
        XCTAssertEqual(real.status, 0, real.stderr)
        XCTAssertLessThan(refusal, genuine, "refused before deriving: \(refusal) s; a real import: \(genuine) s")
        print("hostile export refused in \(Int(refusal * 1000)) ms; a genuine import took \(Int(genuine * 1000)) ms")
    }

    /// `rchat account export` onto a planted symlink: refused, and nothing is written
    /// where it points — whether that file exists or not.
    func testExportNeverWritesThroughAPlantedSymlink() throws {
        try initAccount("alice")
        let victim = box.path("victim"), missing = box.path("missing")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        for (link, target) in [("to-victim", victim), ("dangling", missing)] {
            try FileManager.default.createSymbolicLink(atPath: box.path(link), withDestinationPath: target)
            let run = try box.rchat("alice", ["account", "export", box.path(link)], env: ["RCHAT_PASSPHRASE": "pass phrase"])
            XCTAssertFailsCleanly(run, status: 2, mentions: "already exists")
            XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: box.path(link)), target)
        }
        XCTAssertEqual(FileManager.default.contents(atPath: victim), Data("precious".utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))
    }

    func testCorruptDatabaseIsReportedAndLeftAlone() throws {
        try initAccount("alice")
        let db = box.path("alice-home/rchat.db")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: db))
        for i in 0..<100 { bytes[i] = UInt8(truncatingIfNeeded: i &* 37) }
        try bytes.write(to: URL(fileURLWithPath: db))
        let before = box.snapshot(box.path("alice-home"))
        for args in [["code"], ["contacts"], ["account", "export", box.path("x")]] {
            let run = try box.rchat("alice", args, env: ["RCHAT_PASSPHRASE": "x"])
            XCTAssertEqual(run.status, 1, "\(args): \(run.stderr)")
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1)
            XCTAssertTrue(run.stderr.contains("database"), run.stderr)
        }
        XCTAssertEqual(box.snapshot(box.path("alice-home")), before)
    }

    func testDataFromAnotherDeviceIsRefusedAndLeftAlone() throws {
        try initAccount("alice")
        let before = box.snapshot(box.path("alice-home"))
        let run = try box.rchat("alice", ["code"], device: "other-device")
        XCTAssertFailsCleanly(run, status: 1, mentions: "another device")
        XCTAssertEqual(box.snapshot(box.path("alice-home")), before)
    }

    func testDeviceKeyReadableByOthersIsRefused() throws {
        try initAccount("alice")
        chmod(box.path("alice-device/device.key"), 0o644)
        XCTAssertFailsCleanly(try box.rchat("alice", ["code"]), status: 1, mentions: "chmod 600")
    }
}
