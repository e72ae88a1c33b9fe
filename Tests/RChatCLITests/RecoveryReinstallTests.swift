import Foundation
import XCTest

/// A contact who lost their state — a same-machine reinstall (automatic resend),
/// a new phone (Not delivered, Resend, re-verify, then automatic), and a stolen copy of the
/// account keys on another machine (never automatic). Real relay, real `rchat sync`.
final class RecoveryReinstallTests: RecoveryTestCase {
    static let resentTwo = "Sam's phone couldn't read 2 messages, so rChat sent them again."
    static let decryptedTwo = "2 messages from Alice couldn't be decrypted on this phone. Alice has been told, so they can resend them."
    static let notReadTwo = "2 messages couldn't be read on Sam's phone."
    static let newDevice = "Sam is using a new device. Enter their code again to verify it."

    /// Same machine, same device key: the notice is signed by the pinned device key, so
    /// Alice's phone sends both again by itself, with their ids, marked Resent.
    func testSameMachineReinstallResendsAutomaticallyWithBothRows() throws {
        try chattingPair()
        let held = try messagesHeldForSam(2)
        try world.reinstall("sam")
        try world.startSync("sam")

        try world.statusesBeforeDeadline("alice", "Sam", held, "Delivered")
        let alice = try world.list("alice", "Sam").filter { held.contains($0.id) }
        XCTAssertEqual(alice.map(\.resent), [true, true], "\(alice)")
        let aliceRows = try world.rows("alice", "Sam")
        XCTAssertEqual(aliceRows.map(\.text), [Self.resentTwo])
        XCTAssertEqual(aliceRows.first?.action, nil)
        XCTAssertEqual(Set(aliceRows.first?.ids ?? []), Set(held))

        let samRow = try world.rowBeforeDeadline("sam", "Alice", Self.decryptedTwo)
        XCTAssertNil(samRow.action)
        XCTAssertEqual(Set(samRow.ids), Set(held))
        XCTAssertEqual(try world.rows("sam", "Alice").map(\.text), [Self.decryptedTwo])
        // Sam has each of them once, readable, with the id it was first sent with.
        let received = try world.list("sam", "Alice").filter { $0.direction == "in" }
        XCTAssertEqual(received.map(\.id).sorted(), held.sorted())
        XCTAssertEqual(Set(received.map(\.text)), ["while you were away 1", "while you were away 2"])
        XCTAssertTrue(world.syncLog("alice").contains("Sam could not read 2 message(s): 2 resent automatically, 0 not delivered"),
                      world.diagnostics())
        // The conversation carries on both ways.
        try world.deliveredBarrier("sam", to: "Alice", "back again")
        try world.deliveredBarrier("alice", to: "Sam", "welcome back")
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// A new phone (new device key, not pinned; seed 000, "Tap to resend"): Alice's side
    /// says so ("Sam is using a new device…"), what the relay held is Not delivered with
    /// Resend, and what Alice sends or resends by hand goes to the new phone and is
    /// Delivered, once. What rChat would send by itself waits for Sam's code: no automatic
    /// resend, no receipt, and a message written before the row says why it waits. A later
    /// could-not-read notice from that phone is Not delivered with Resend again; entering
    /// Sam's new code pins the phone, the row goes, and from then on a reinstall there is
    /// the automatic case.
    func testNewPhoneGetsWhatIsSentByHandAndTheAutomaticPathWaitsForTheCode() throws {
        try chattingPair()
        let held = try messagesHeldForSam(2)
        // Written while Alice's rChat is closed too: it is still on her machine when Sam's new
        // phone appears, so it was not asked for with the new phone in view.
        world.stopSync("alice")
        let early = try world.send("alice", to: "Sam", "written before the new phone")
        try world.reinstall("sam", newPhone: true)
        try world.startSync("sam")
        try world.startSync("alice")

        let row = try world.rowBeforeDeadline("alice", "Sam", Self.notReadTwo)
        XCTAssertEqual(row.action, "resend")
        XCTAssertEqual(Set(row.ids), Set(held))
        try world.statusesBeforeDeadline("alice", "Sam", held, "Not delivered")
        try world.rowBeforeDeadline("sam", "Alice", Self.decryptedTwo)
        let newDevice = try world.rows("alice", "Sam").first { $0.text == Self.newDevice }
        XCTAssertEqual(newDevice?.action, nil, "the action is entering the code, not a keypress")
        XCTAssertEqual(try world.rows("alice", "Sam").map(\.text), [Self.newDevice, Self.notReadTwo], "no “so rChat sent” row")
        XCTAssertTrue(world.syncLog("alice").contains("0 resent automatically, 2 not delivered"), world.diagnostics())
        // The one written before the row waits, and says for what.
        try world.eventually("Alice's engine holds back what was written before the new phone appeared", timeout: 20) {
            world.syncLog("alice").contains("1 message(s) to Sam wait until their new device is verified")
        }
        let waiting = try XCTUnwrap(try world.list("alice", "Sam").first { $0.id == early })
        XCTAssertEqual(waiting.status, "Sending")
        XCTAssertEqual(waiting.waiting, "waiting for you to verify Sam's new device")
        let line = try world.box.rchat("alice", ["list", "Sam"])
        XCTAssertTrue(line.lines.contains { $0.contains("written before the new phone  [Sending]  (waiting for you to verify Sam's new device)") },
                      line.stdout)

        // Sam writes from the new phone: Alice reads it; her Delivered receipt is automatic, so it waits.
        let fromNewPhone = try world.send("sam", to: "Alice", "hello from my new phone")
        try world.receivedBeforeDeadline("alice", "Sam", [fromNewPhone])

        // A message Alice writes now, below the row, goes to the new phone.
        let asked = try world.deliveredBarrier("alice", to: "Sam", "are you there?")
        XCTAssertEqual(try world.list("alice", "Sam").first { $0.id == asked }?.waiting, nil)
        // Resend: the two Not delivered and the one that waited go to the new phone.
        let resend = try world.box.rchat("alice", ["resend", "Sam", "--all"])
        XCTAssertEqual(resend.status, 0, resend.stderr)
        XCTAssertEqual(resend.lines, ["sending 3 messages again"])
        try world.statusesBeforeDeadline("alice", "Sam", held + [early], "Delivered")
        let received = try world.list("sam", "Alice").filter { $0.direction == "in" }
        for id in held + [early, asked] { XCTAssertEqual(received.filter { $0.id == id }.count, 1, "\(id) shown once: \(received)") }
        XCTAssertEqual(Set(received.map(\.text)),
                       ["while you were away 1", "while you were away 2", "written before the new phone", "are you there?"])
        let alice = try world.list("alice", "Sam")
        XCTAssertFalse(alice.contains { $0.resent }, "sent by hand, never automatically: \(alice)")
        XCTAssertEqual(alice.filter { $0.waiting != nil }, [], "nothing waits any more")
        XCTAssertEqual(try world.list("sam", "Alice").first { $0.id == fromNewPhone }?.status, "Sent", "no receipt from Alice yet")
        XCTAssertEqual(try world.rows("alice", "Sam").map(\.text), [Self.newDevice, Self.notReadTwo], "the row stays until the code")

        // "This continues until you scan their code again": the new phone loses its state
        // again (a reinstall on it): Not delivered with Resend again, nothing automatic.
        let heldAgain = try messagesHeldForSam(1, "second time away")
        try world.reinstall("sam")
        try world.startSync("sam")
        let notReadOne = "1 message couldn't be read on Sam's phone."
        let again = try world.rowBeforeDeadline("alice", "Sam", notReadOne)
        XCTAssertEqual(again.action, "resend")
        XCTAssertEqual(again.ids, heldAgain)
        try world.statusesBeforeDeadline("alice", "Sam", heldAgain, "Not delivered")
        XCTAssertEqual(try world.list("alice", "Sam").first { $0.id == heldAgain[0] }?.resent, false)
        XCTAssertTrue(world.syncLog("alice").contains("0 resent automatically, 1 not delivered"), world.diagnostics())
        let resendAgain = try world.box.rchat("alice", ["resend", "Sam", "--all"])
        XCTAssertEqual(resendAgain.lines, ["sending 1 message again"], resendAgain.stderr)
        try world.statusesBeforeDeadline("alice", "Sam", heldAgain, "Delivered")
        // (The reinstall took "hello from my new phone" with it; this one waits for its receipt.)
        let fromReinstalled = try world.send("sam", to: "Alice", "back on my new phone")
        try world.receivedBeforeDeadline("alice", "Sam", [fromReinstalled])
        XCTAssertEqual(try world.list("sam", "Alice").first { $0.id == fromReinstalled }?.status, "Sent", "no receipt from Alice yet")

        // Scanning Sam's new code in person pins the new device key: the row goes, receipts go.
        let add = try world.box.rchat("alice", ["add", try world.code("sam")])
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertTrue(add.stdout.contains("verified again"), add.stdout)
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["ok"])
        try world.statusesBeforeDeadline("sam", "Alice", [fromReinstalled], "Delivered")
        XCTAssertEqual(try world.rows("alice", "Sam").map(\.text), [Self.notReadTwo, notReadOne], "“Sam is using a new device…” went")
        XCTAssertEqual(try world.rows("alice", "Sam").map(\.action), [nil, nil], "everything they offered was Delivered")

        // From now on a reinstall on this (new) phone is the usual, automatic case.
        let heldThird = try messagesHeldForSam(1, "third time away")
        try world.reinstall("sam")
        try world.startSync("sam")
        try world.statusesBeforeDeadline("alice", "Sam", heldThird, "Delivered")
        XCTAssertEqual(try world.list("alice", "Sam").first { $0.id == heldThird[0] }?.resent, true)
        let resentRow = try world.rowBeforeDeadline("alice", "Sam", "Sam's phone couldn't read 1 message, so rChat sent it again.")
        XCTAssertNil(resentRow.action)
        XCTAssertEqual(resentRow.ids, heldThird)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.id), heldThird)
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Someone with a copy of Sam's account keys but not his machine ("Mallory": Sam's backup
    /// imported on another device directory) cannot make Alice resend anything by itself.
    func testStolenAccountKeysWithoutTheDeviceKeyNeverResendAutomatically() throws {
        try chattingPair()
        let held = try messagesHeldForSam(2)
        let stolen = try world.exportAccount("sam")
        try world.importAccount("mallory", from: stolen)
        try world.startSync("mallory")

        let row = try world.rowBeforeDeadline("alice", "Sam", Self.notReadTwo)
        XCTAssertEqual(row.action, "resend")
        XCTAssertEqual(Set(row.ids), Set(held))
        try world.statusesBeforeDeadline("alice", "Sam", held, "Not delivered")
        // Whatever else happens on the conversation, none of them goes again by itself. To
        // Alice the copy looks like Sam's new phone (the row says so): what she writes by
        // hand below that row goes to it (seed 000: the keypress is the consent), and only that.
        let later = try world.deliveredBarrier("alice", to: "Sam", "later")
        let alice = try world.list("alice", "Sam")
        XCTAssertEqual(alice.filter { held.contains($0.id) }.map(\.status), ["Not delivered", "Not delivered"])
        XCTAssertFalse(alice.contains { $0.resent }, "\(alice)")
        XCTAssertEqual(try world.rows("alice", "Sam").map(\.text), [Self.newDevice, Self.notReadTwo])
        XCTAssertEqual(try world.list("mallory", "Alice").filter { $0.direction == "in" }.map(\.id), [later])
        XCTAssertTrue(world.syncLog("alice").contains("0 resent automatically, 2 not delivered"), world.diagnostics())
        world.stopSync("alice")
        world.stopSync("mallory")
    }
}
