import Foundation
import XCTest
import RChatCore
import RChatCrypto
#if canImport(Glibc)
import Glibc
#endif

final class ContactCommandTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        for person in ["alice", "sam"] {
            let run = try box.rchat(person, ["init", "--name", person.capitalized, "--relay", offlineRelay])
            XCTAssertEqual(run.status, 0, run.stderr)
        }
    }

    override func tearDown() { box = nil }

    func code(_ person: String) throws -> String { try box.rchat(person, ["code"]).lines[0] }

    func testAddPinsAndListsTheContact() throws {
        XCTAssertEqual(try box.rchat("alice", ["contacts", "--json"]).stdout, "")
        let add = try box.rchat("alice", ["add", try code("sam")])
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertEqual(add.lines.first, "added Sam")
        XCTAssertTrue(add.lines.last?.hasPrefix("safety number: ") ?? false)
        // Both sides compute the same safety number.
        let back = try box.rchat("sam", ["add", try code("alice")])
        XCTAssertEqual(back.lines.last, add.lines.last)

        XCTAssertEqual(try box.rchat("alice", ["contacts", "--json"]).lines, [#"{"name":"Sam","state":"ok","unread":0,"timer":"off"}"#])
        XCTAssertTrue(try box.rchat("alice", ["contacts"]).stdout.contains("Sam"))
        // Adding the same code again is harmless.
        let again = try box.rchat("alice", ["add", try code("sam")])
        XCTAssertEqual(again.status, 0)
        XCTAssertEqual(try box.rchat("alice", ["contacts", "--json"]).lines.count, 1)
        // A chosen name.
        let third = try box.rchat("carol", ["init", "--name", "Carol", "--relay", offlineRelay])
        XCTAssertEqual(third.status, 0)
        XCTAssertEqual(try box.rchat("alice", ["add", try code("carol"), "--name", "Caz"]).status, 0)
        XCTAssertEqual(try box.rchat("alice", ["contacts", "--json"]).lines.count, 2)
        XCTAssertTrue(try box.rchat("alice", ["contacts", "--json"]).stdout.contains(#""name":"Caz""#))
    }

    /// Each contact change confirms itself in words ("muted Sam", never "muteed Sam"), and
    /// Resend to a blocked contact says it is blocked.
    func testEveryContactChangeConfirmsInWords() throws {
        XCTAssertEqual(try box.rchat("alice", ["add", try code("sam")]).status, 0)
        for (command, said) in [("mute", "muted Sam"), ("unmute", "unmuted Sam"), ("block", "blocked Sam")] {
            let run = try box.rchat("alice", [command, "Sam"])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(run.lines, [said], command)
        }
        let resend = try box.rchat("alice", ["resend", "Sam", "--all"])
        XCTAssertEqual(resend.status, 2)
        XCTAssertEqual(resend.stderr.split(separator: "\n").count, 1, resend.stderr)
        XCTAssertTrue(resend.stderr.contains("Sam is blocked"), resend.stderr)
        for (command, said) in [("unblock", "unblocked Sam"), ("delete", "deleted Sam")] {
            let run = try box.rchat("alice", [command, "Sam"])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertEqual(run.lines, [said], command)
        }
    }

    /// Every setting is listed with its value, takes what its help says, and refuses
    /// anything else in one line with exit 2, storing nothing.
    func testSettingsListTakeAndRefuse() throws {
        let listed = try box.rchat("alice", ["settings"]).lines
        XCTAssertEqual(listed, ["show-in-alerts name", "desktop-alerts not asked yet", "alerts-while-open unfocused", "alert-reactions on", "bell off",
                                "receipt-window-ms 200", "receipt-batch 64", "ack-timeout-s 15", "max-attachment-mb 100",
                                "max-incoming-mb 2048", "steady-traffic normal", "mouse on", "glyphs unicode"])
        for (key, good, bad, says) in [("show-in-alerts", "message", "everything", "one of: name, nothing, message"),
                                       ("desktop-alerts", "on", "yes", "on or off"),
                                       ("alerts-while-open", "always", "hidden", "one of: off, unfocused, always"),
                                       ("bell", "on", "loud", "on or off"),
                                       ("receipt-window-ms", "0", "60001", "from 0 to 60000"),
                                       ("receipt-batch", "1000", "1001", "from 1 to 1000"),
                                       ("ack-timeout-s", "30", "zero", "from 1 to 3600"),
                                       ("max-attachment-mb", "250", "0", "from 1 to 1048576"),
                                       ("max-incoming-mb", "4096", "1048577", "from 1 to 1048576"),
                                       ("steady-traffic", "low", "high", "one of: off, low, normal"),
                                       ("mouse", "off", "maybe", "on or off"),
                                       ("glyphs", "ascii", "emoji", "glyphs is unicode or ascii")] {
            XCTAssertFailsCleanly(try box.rchat("alice", ["settings", key, bad]), status: 2, mentions: says)
            XCTAssertEqual(try box.rchat("alice", ["settings", key, good]).lines, ["\(key) \(good)"])
        }
        XCTAssertFailsCleanly(try box.rchat("alice", ["settings", "volume", "11"]), status: 2, mentions: "unknown setting volume")
        XCTAssertEqual(try box.rchat("alice", ["settings"]).lines, ["show-in-alerts message", "desktop-alerts on", "alerts-while-open always", "alert-reactions on", "bell on",
                                                                    "receipt-window-ms 0", "receipt-batch 1000", "ack-timeout-s 30",
                                                                    "max-attachment-mb 250", "max-incoming-mb 4096", "steady-traffic low", "mouse off", "glyphs ascii"])
    }

    /// Issue 26: turning desktop alerts on where there is no desktop says where alerts go
    /// instead (stored all the same: the next start may be on a desktop).
    func testDesktopAlertsOnWithoutADesktopSaysWhereAlertsGo() throws {
        let runtime = box.path("runtime")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        let none = ["DISPLAY": "", "WAYLAND_DISPLAY": "", "DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": runtime]
        let bare = try box.rchat("alice", ["settings", "desktop-alerts", "on"], env: none)
        XCTAssertEqual(bare.status, 0, bare.stderr)
        XCTAssertEqual(bare.lines, ["desktop-alerts on"])
        XCTAssertEqual(bare.stderr, "rchat: no desktop here (no session bus or display): alerts here go to the terminal\n")
        let desktop = try box.rchat("alice", ["settings", "desktop-alerts", "on"], env: none.merging(["DISPLAY": ":5"]) { $1 })
        XCTAssertEqual(desktop.stderr, "", "a display: a desktop")
        let bus = try box.rchat("alice", ["settings", "desktop-alerts", "on"], env: none.merging(["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(runtime)/x"]) { $1 })
        XCTAssertEqual(bus.stderr, "", "a session bus: a desktop")
        XCTAssertEqual(try box.rchat("alice", ["settings", "desktop-alerts", "off"], env: none).stderr, "")
    }

    func testACodePastedWithSpacesAndLineBreaksIsAdded() throws {
        let good = try code("sam")
        // Broken as a terminal breaks a selection across rows, with spaces besides.
        var pasted = ""
        for (i, c) in good.enumerated() {
            if i > 0 && i % 80 == 0 { pasted += i % 160 == 0 ? "\n" : " \r\n " }
            pasted.append(c)
        }
        XCTAssertTrue(pasted.contains("\n") && pasted.contains(" "))
        // A doctored code with the same breaks still fails, with one line and exit 2.
        var doctored = Array(pasted)
        let i = doctored.count / 2 + (doctored[doctored.count / 2].isWhitespace ? 3 : 0)
        doctored[i] = doctored[i] == "A" ? "B" : "A"
        XCTAssertFailsCleanly(try box.rchat("alice", ["add", String(doctored)]), status: 2, mentions: "checksum")
        XCTAssertEqual(try box.rchat("alice", ["contacts", "--json"]).stdout, "")

        let add = try box.rchat("alice", ["add", pasted])
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertEqual(add.lines.first, "added Sam")
        XCTAssertEqual(try box.rchat("alice", ["contacts", "--json"]).lines, [#"{"name":"Sam","state":"ok","unread":0,"timer":"off"}"#])
    }

    func testBellSettingIsOffUntilTurnedOn() throws {
        func bell() throws -> String? {
            try box.rchat("alice", ["settings"]).lines.first { $0.hasPrefix("bell ") }
        }
        XCTAssertEqual(try bell(), "bell off")
        XCTAssertEqual(try box.rchat("alice", ["settings", "bell", "on"]).status, 0)
        XCTAssertEqual(try bell(), "bell on")
        XCTAssertFailsCleanly(try box.rchat("alice", ["settings", "bell", "loud"]), status: 2, mentions: "bell is on or off")
        XCTAssertEqual(try bell(), "bell on", "a refused value changes nothing")
        XCTAssertEqual(try box.rchat("alice", ["settings", "bell", "off"]).status, 0)
        XCTAssertEqual(try bell(), "bell off")
    }

    func testBadCodesAreRefusedAndNothingIsStored() throws {
        let good = try code("sam")
        var mistyped = Array(good)
        let i = mistyped.count / 2
        mistyped[i] = mistyped[i] == "A" ? "B" : "A"
        let cases: [(String, String)] = [
            (String(good.prefix(good.count - 10)), "truncated"),
            (String(mistyped), "checksum"),
            (good.replacingOccurrences(of: "rchat-2-", with: "rchat-9-"), "version 9"),
            ("hello there", "not an rchat contact code"),
            (try code("alice"), "yourself"),
        ]
        for (input, mention) in cases {
            XCTAssertFailsCleanly(try box.rchat("alice", ["add", input]), status: 2, mentions: mention)
        }
        XCTAssertEqual(try box.rchat("alice", ["contacts", "--json"]).stdout, "")
    }

    func testTamperedCertificateIsRefused() throws {
        var parsed = try ContactCode(parsing: try code("sam"))
        parsed.deviceCertificate[5] ^= 1
        XCTAssertFailsCleanly(try box.rchat("alice", ["add", parsed.text]), status: 2, mentions: "signature")
        // A device key swapped for another: the code's signature no longer covers it.
        var swapped = try ContactCode(parsing: try code("sam"))
        swapped.deviceKey = try ContactCode(parsing: try code("alice")).deviceKey
        XCTAssertFailsCleanly(try box.rchat("alice", ["add", swapped.text]), status: 2, mentions: "signature")
        // Signed whole by its account key, but the device key is not certified by it.
        let account = SigningKey.generate()
        var uncertified = ContactCode(name: "Mallory", accountKey: account.publicKey, deviceKey: SigningKey.generate().publicKey,
                                      deviceCertificate: [UInt8](repeating: 1, count: 64), relay: parsed.relay,
                                      inviteToken: parsed.inviteToken, signature: [])
        uncertified.signature = account.sign(ContactCode.signatureLabel + uncertified.signedFields)
        XCTAssertFailsCleanly(try box.rchat("alice", ["add", uncertified.text]), status: 2, mentions: "certificate")
        XCTAssertEqual(try box.rchat("alice", ["contacts", "--json"]).stdout, "")
    }

    func testNameClashNeedsAName() throws {
        let other = try box.rchat("sam2", ["init", "--name", "Sam", "--relay", offlineRelay])
        XCTAssertEqual(other.status, 0)
        XCTAssertEqual(try box.rchat("alice", ["add", try code("sam")]).status, 0)
        XCTAssertFailsCleanly(try box.rchat("alice", ["add", try code("sam2")]), status: 2, mentions: "--name")
        XCTAssertEqual(try box.rchat("alice", ["add", try code("sam2"), "--name", "Sam B"]).status, 0)
    }

    func testReenteringACodeFromANewDevicePinsTheNewKey() throws {
        XCTAssertEqual(try box.rchat("alice", ["add", try code("sam")]).status, 0)
        // Sam moves to a new phone: same account (export/import), new device directory.
        let file = box.path("sam.backup")
        XCTAssertEqual(try box.rchat("sam", ["account", "export", file], env: ["RCHAT_PASSPHRASE": "pw"]).status, 0)
        XCTAssertEqual(try box.rchat("samnew", ["init", "--import", file], env: ["RCHAT_PASSPHRASE": "pw"]).status, 0)
        let newCode = try code("samnew")
        let add = try box.rchat("alice", ["add", newCode])
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertEqual(add.lines.first, "Sam verified again: new keys pinned")
        XCTAssertEqual(try box.rchat("alice", ["contacts", "--json"]).lines, [#"{"name":"Sam","state":"ok","unread":0,"timer":"off"}"#])
    }
}
