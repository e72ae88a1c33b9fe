import Foundation
import XCTest

/// The command line as a user types it: global options on either side of the command
/// word, refusals from the declared options, help generated from them.
extension ContactCommandTests {
    /// Alice with Sam added (both made by `setUp`).
    private func aliceKnowsSam() throws {
        XCTAssertEqual(try box.rchat("alice", ["add", try code("sam")]).status, 0)
    }

    private var aliceHome: String { box.path("alice-home") }
    private var aliceDevice: String { box.path("alice-device") }

    func testGlobalOptionsWorkBeforeAndAfterTheCommandWord() throws {
        try aliceKnowsSam()
        let rchat = Binaries.path("rchat")
        let after = try box.run(rchat, ["contacts", "--json", "--home", aliceHome, "--device-dir", aliceDevice])
        XCTAssertEqual(after.status, 0, after.stderr)
        XCTAssertEqual(after.lines, [#"{"name":"Sam","state":"ok","unread":0,"timer":"off"}"#])
        for words in [["--home", aliceHome, "--device-dir", aliceDevice, "contacts", "--json"],
                      ["--home", aliceHome, "contacts", "--device-dir", aliceDevice, "--json"],
                      ["--home=\(aliceHome)", "--device-dir=\(aliceDevice)", "contacts", "--json"]] {
            let run = try box.run(rchat, words)
            XCTAssertEqual(run.status, 0, "\(words): \(run.stderr)")
            XCTAssertEqual(run.stdout, after.stdout, "\(words)")
        }
        // A two-word command after global options, too.
        let code = try box.run(rchat, ["--home", aliceHome, "--device-dir", aliceDevice, "code"])
        XCTAssertEqual(code.status, 0, code.stderr)
        XCTAssertEqual(code.lines, try box.rchat("alice", ["code"]).lines)
    }

    func testRefusalsAreOneLineAndExit2() throws {
        let rchat = Binaries.path("rchat")
        let before = box.snapshot(aliceHome)
        XCTAssertFailsCleanly(try box.run(rchat, ["--json", "contacts", "--home", aliceHome]), status: 2,
                              mentions: #"rchat: unknown option "--json" (see rchat --help)"#)
        XCTAssertFailsCleanly(try box.run(rchat, ["--home"]), status: 2, mentions: "rchat: --home needs a value")
        XCTAssertFailsCleanly(try box.rchat("alice", ["contacts", "--bogus"]), status: 2,
                              mentions: #"rchat: contacts: unknown option "--bogus" (see rchat contacts --help)"#)
        XCTAssertFailsCleanly(try box.rchat("alice", ["sync", "--seconds", "soon"]), status: 2,
                              mentions: #"rchat: sync: --seconds must be a number of seconds from 0 to 31536000, not "soon""#)
        XCTAssertFailsCleanly(try box.rchat("alice", ["contacts", "--json=yes"]), status: 2, mentions: "--json takes no value")
        XCTAssertFailsCleanly(try box.rchat("alice", ["contacts", "extra"]), status: 2, mentions: #"unexpected argument "extra""#)
        XCTAssertEqual(box.snapshot(aliceHome), before, "a refused command line changes nothing")
    }

    func testHelpListsTheDeclaredOptionsWhereverHelpIsAsked() throws {
        let rchat = Binaries.path("rchat")
        for words in [["contacts", "--help"], ["--help", "contacts"], ["--home", aliceHome, "contacts", "-h"]] {
            let run = try box.run(rchat, words)
            XCTAssertEqual(run.status, 0, "\(words)")
            XCTAssertTrue(run.stdout.hasPrefix("usage: rchat contacts [--json]"), run.stdout)
            XCTAssertTrue(run.stdout.contains("\n  --json  one JSON object per line\n"), run.stdout)
            XCTAssertTrue(run.stdout.contains("\n  --home DIR        account data"), run.stdout)
        }
        let top = try box.run(rchat, ["--home", aliceHome, "--help"])
        XCTAssertEqual(top.status, 0)
        XCTAssertTrue(top.stdout.contains("before or after its name:\n  --home DIR"), top.stdout)
    }
}
