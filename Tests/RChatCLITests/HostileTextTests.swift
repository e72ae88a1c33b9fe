import Foundation
import XCTest
import RChatCore
import RChatStore
import DesktopBusFixture

/// What a terminal would act on: C0 controls but the line break and the tab, DEL, C1
/// controls, line and paragraph separators, direction marks, embeddings, overrides and
/// isolates. The scalars of `text` that are among them.
func terminalControls(in text: String, allowing allowed: Set<Unicode.Scalar> = ["\n", "\t"]) -> [String] {
    let bidi: Set<UInt32> = [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069,
                             0x2028, 0x2029]
    return text.unicodeScalars.filter { s in
        guard !allowed.contains(s) else { return false }
        return s.value < 0x20 || (0x7F...0x9F).contains(s.value) || bidi.contains(s.value)
    }.map { "U+" + String($0.value, radix: 16, uppercase: true) }
}

extension EngineWorld {
    /// A name with a direction override: no code can carry it (`ContactCode.validName`),
    /// and `rchat init` refuses it. The messages are where hostile text can still come from.
    static let hostileName = "Mal\u{202E}lory\u{2066}"
    static let hostileText = "hi \u{1B}]0;pwned\u{07}\u{1B}[2J\u{1B}[31mred \u{9B}31m \u{202E}evil\u{2069} \u{7F}"
        + "\ttabbed\nsecond line\rover\u{2028}third <a href=\"https://evil\">x</a>"

    /// Alice and Mallory added each other and met once (a warm-up message); Mallory's
    /// hostile message waits for Alice at the relay (Alice's engine is not running).
    /// Returns its id.
    func hostileMessageWaitingForAlice() throws -> String {
        try makeAccount("alice")
        try makeAccount("mallory", name: "Mallory")
        try add("alice", "mallory")
        try add("mallory", "alice")
        try startSync("mallory")
        try startSync("alice")
        let warmUp = try send("mallory", to: "Alice", "warm-up")
        try waitForStatus("mallory", "Alice", warmUp, "Delivered")
        stopSync("alice")
        let id = try send("mallory", to: "Alice", Self.hostileText)
        try waitForStatus("mallory", "Alice", id, "Sent")
        return id
    }
}

/// Names and texts another person chose reach Alice's terminal only as visible stand-ins,
/// in every command's output; `--json` escapes them and still gives the exact text.
final class HostileTextTests: EngineTestCase {
    func testHostileTextFromARealPeerNeverReachesTheTerminalRaw() throws {
        let id = try world.hostileMessageWaitingForAlice()
        let name = "Mallory"
        XCTAssertFailsCleanly(try world.box.rchat("eve", ["init", "--name", EngineWorld.hostileName, "--relay", world.relayAddress]),
                              status: 2, mentions: "direction marks")
        try world.expectSuccess(world.box.rchat("alice", ["settings", "show-in-alerts", "message"]))

        // The background check collects it and prints its alert: one TITLE<TAB>TEXT line.
        let check = try world.box.rchat("alice", ["check", "--print"])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertEqual(terminalControls(in: check.stdout, allowing: ["\n", "\t"]), [], check.stdout.debugDescription)
        XCTAssertEqual(check.lines.count, 1, check.stdout.debugDescription)
        let fields = check.lines[0].split(separator: "\t", omittingEmptySubsequences: false)
        XCTAssertEqual(fields.count, 2, "a tab in the text cannot make a third field: \(check.stdout.debugDescription)")
        XCTAssertEqual(fields.first, "Mallory")
        XCTAssertTrue(check.lines[0].contains("hi \u{241B}]0;pwned\u{2407}\u{241B}[2J"), check.stdout.debugDescription)
        XCTAssertEqual(terminalControls(in: check.stderr), [], check.stderr.debugDescription)

        // The engine's log names the contact too.
        XCTAssertTrue(world.syncLog("alice").contains("Mallory"), world.syncLog("alice"))
        XCTAssertEqual(terminalControls(in: world.syncLog("alice")), [], world.syncLog("alice").debugDescription)

        // `rchat list`, human: stand-ins; the message's own line breaks stay line breaks.
        let list = try world.box.rchat("alice", ["list", name])
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertEqual(terminalControls(in: list.stdout), [], list.stdout.debugDescription)
        XCTAssertTrue(list.stdout.contains("hi \u{241B}]0;pwned\u{2407}\u{241B}[2J\u{241B}[31mred \u{FFFD}31m \u{FFFD}evil\u{FFFD} \u{2421}\ttabbed\n"),
                      list.stdout.debugDescription)
        XCTAssertTrue(list.stdout.contains("second line\u{240D}over\n"), "a lone CR cannot overwrite the line: \(list.stdout.debugDescription)")
        XCTAssertEqual(list.lines.count, 4, "the warm-up, and the hostile message on three lines: \(list.stdout.debugDescription)")

        // `rchat list --json`: no raw control on the line, the exact text once decoded.
        let json = try world.box.rchat("alice", ["list", name, "--json"])
        XCTAssertEqual(terminalControls(in: json.stdout, allowing: ["\n"]), [], json.stdout.debugDescription)
        XCTAssertTrue(json.stdout.contains(#"\u001b]0;pwned\u0007"#), json.stdout)
        XCTAssertTrue(json.stdout.contains(#"\u202e"#), json.stdout)
        XCTAssertEqual(try world.list("alice", name).map(\.text), ["warm-up", EngineWorld.hostileText])
        XCTAssertEqual(try world.list("alice", name).last?.id, id)

        // `rchat contacts`, human and JSON.
        let contacts = try world.box.rchat("alice", ["contacts"])
        XCTAssertEqual(terminalControls(in: contacts.stdout), [], contacts.stdout.debugDescription)
        XCTAssertTrue(contacts.stdout.hasPrefix("Mallory  ok"), contacts.stdout.debugDescription)
        let contactsJSON = try world.box.rchat("alice", ["contacts", "--json"])
        XCTAssertEqual(terminalControls(in: contactsJSON.stdout, allowing: ["\n"]), [], contactsJSON.stdout.debugDescription)
        XCTAssertEqual(try world.contacts("alice").map(\.name), [name])

        // An error quoting the name stays one line of stand-ins.
        let refused = try world.box.rchat("alice", ["send", "Bob\u{1B}]0;t\u{7}\nX", "hello"])
        XCTAssertFailsCleanly(refused, status: 2, mentions: "no contact named Bob\u{241B}]0;t\u{2407}\u{2424}X")
        XCTAssertEqual(terminalControls(in: refused.stderr, allowing: ["\n"]), [], refused.stderr.debugDescription)
        world.stopSync("mallory")
    }

    /// The desktop alert (a notification service on a private session bus records what it
    /// was sent): stand-ins in the title and the body, and no markup in the body.
    func testDesktopAlertCarriesStandInsAndNoMarkup() throws {
        _ = try world.hostileMessageWaitingForAlice()
        try world.expectSuccess(world.box.rchat("alice", ["settings", "show-in-alerts", "message"]))
        try world.expectSuccess(world.box.rchat("alice", ["settings", "desktop-alerts", "on"]))
        let desktop = try PrivateDesktop(directory: world.box.path("bus"))
        defer { desktop.stop() }
        let check = try world.box.rchat("alice", ["check"], env: ["DBUS_SESSION_BUS_ADDRESS": desktop.address])
        XCTAssertEqual(check.status, 0, check.stderr)
        // Shown by `rchat notify`, started in the background by the check.
        try world.eventually("the alert shown", timeout: 10) { !desktop.notifications.isEmpty }
        let alert = desktop.notifications[0]
        XCTAssertEqual(alert.actions, ["default", "Open"])
        XCTAssertEqual(alert.title, "Mallory")
        XCTAssertTrue(alert.body.hasPrefix("hi \u{241B}]0;pwned\u{2407}\u{241B}[2J"), alert.body)
        XCTAssertTrue(alert.body.hasSuffix("third &lt;a href=\"https://evil\"&gt;x&lt;/a&gt;"), alert.body)
        XCTAssertEqual(terminalControls(in: alert.title + alert.body, allowing: []), [], "\(alert)")
        world.stopSync("mallory")
    }

    /// An attachment's name is the sender's text too: it lists as one line, its name in
    /// stand-ins, and `--json` gives the line exactly.
    func testAnAttachmentNameFromAPeerListsAsOneLineOfStandIns() throws {
        try world.makeAccount("alice")
        try world.makeAccount("mallory", name: "Mallory")
        try world.add("alice", "mallory")
        let file = Attachment(kind: .file, name: "a\u{1B}[2J\nb\u{202E}.txt", size: 3, contentHash: [UInt8](repeating: 1, count: 32),
                              key: [UInt8](repeating: 2, count: 32))
        let id = MessageID.random()
        do {
            // Stored as the engine stores what arrives.
            let store = try Store(path: world.box.path("alice-home") + "/rchat.db")
            defer { store.close() }
            let mallory = try XCTUnwrap(store.contact(named: "Mallory")).id
            try store.insertIncoming(contact: mallory, id: id, content: .attachment(file), at: 1_700_000_000)
        }
        let plain = try world.box.rchat("alice", ["list", "Mallory"])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertEqual(plain.lines.count, 1, plain.stdout)
        XCTAssertTrue(plain.lines.first?.hasSuffix(" < File: a\u{241B}[2J\u{2424}b\u{FFFD}.txt (3 B)  \(id.hex)") == true, plain.stdout)
        XCTAssertEqual(terminalControls(in: plain.stdout), [], plain.stdout.debugDescription)
        let listed = try world.list("alice", "Mallory")
        XCTAssertEqual(listed.map(\.text), [MessageContent.attachment(file).displayText(direction: .incoming)])
        XCTAssertEqual(listed.map(\.id), [id.hex])
    }
}
