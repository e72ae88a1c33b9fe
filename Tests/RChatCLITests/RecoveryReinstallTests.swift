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

    /// A new phone (new device key, not pinned): Alice's side says so ("Sam is using a new
    /// device…"), what waited is Not delivered with Resend, and nothing goes to the new
    /// phone — not a new message, not a Resend, not a receipt — until Alice enters Sam's
    /// new code; then all of it goes and is Delivered. After that, a reinstall on that
    /// phone goes the automatic way.
    func testNewPhoneGetsNothingUntilItsCodeIsEnteredAgain() throws {
        try chattingPair()
        let held = try messagesHeldForSam(2)
        try world.reinstall("sam", newPhone: true)
        try world.startSync("sam")

        let row = try world.rowBeforeDeadline("alice", "Sam", Self.notReadTwo)
        XCTAssertEqual(row.action, "resend")
        XCTAssertEqual(Set(row.ids), Set(held))
        try world.statusesBeforeDeadline("alice", "Sam", held, "Not delivered")
        try world.rowBeforeDeadline("sam", "Alice", Self.decryptedTwo)
        let newDevice = try world.rows("alice", "Sam").first { $0.text == Self.newDevice }
        XCTAssertEqual(newDevice?.action, nil, "the action is entering the code, not a keypress")
        XCTAssertEqual(try world.rows("alice", "Sam").map(\.text), [Self.newDevice, Self.notReadTwo], "no “so rChat sent” row")
        XCTAssertTrue(world.syncLog("alice").contains("0 resent automatically, 2 not delivered"), world.diagnostics())

        // Sam writes from the new phone: Alice reads it, but no receipt goes back yet.
        let fromNewPhone = try world.send("sam", to: "Alice", "hello from my new phone")
        try world.receivedBeforeDeadline("alice", "Sam", [fromNewPhone])

        // Nothing goes before the user asks: a new message and the Resend both wait, Sending.
        let asked = try world.send("alice", to: "Sam", "are you there?")
        try world.eventually("Alice's engine holds the message back", timeout: 20) {
            world.syncLog("alice").contains("1 message(s) to Sam wait until their new device is verified")
        }
        let resend = try world.box.rchat("alice", ["resend", "Sam", "--all"])
        XCTAssertEqual(resend.status, 0, resend.stderr)
        XCTAssertEqual(resend.lines, ["sending 2 messages again"])
        try world.eventually("Alice's engine holds the Resend back too", timeout: 20) {
            world.syncLog("alice").contains("3 message(s) to Sam wait until their new device is verified")
        }
        let waiting = try world.list("alice", "Sam")
        XCTAssertEqual(waiting.filter { (held + [asked]).contains($0.id) }.map(\.status), ["Sending", "Sending", "Sending"])
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.id), [], "nothing reached the new phone")
        XCTAssertEqual(try world.list("sam", "Alice").first { $0.id == fromNewPhone }?.status, "Sent", "no receipt from Alice yet")

        // Scanning Sam's new code in person pins the new device key: everything goes.
        let add = try world.box.rchat("alice", ["add", try world.code("sam")])
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertTrue(add.stdout.contains("verified again"), add.stdout)
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["ok"])
        try world.statusesBeforeDeadline("alice", "Sam", held + [asked], "Delivered")
        try world.statusesBeforeDeadline("sam", "Alice", [fromNewPhone], "Delivered")
        let received = try world.list("sam", "Alice").filter { $0.direction == "in" }
        for id in held + [asked] { XCTAssertEqual(received.filter { $0.id == id }.count, 1, "\(id) shown once: \(received)") }
        XCTAssertEqual(Set(received.map(\.text)), ["while you were away 1", "while you were away 2", "are you there?"])
        XCTAssertEqual(try world.rows("alice", "Sam").map(\.text), [Self.newDevice, Self.notReadTwo], "the row is not shown again")

        // From now on a reinstall on this (new) phone is the usual, automatic case.
        let heldAgain = try messagesHeldForSam(1, "second time away")
        try world.reinstall("sam")
        try world.startSync("sam")
        try world.statusesBeforeDeadline("alice", "Sam", heldAgain, "Delivered")
        XCTAssertEqual(try world.list("alice", "Sam").first { $0.id == heldAgain[0] }?.resent, true)
        let resentRow = try world.rowBeforeDeadline("alice", "Sam", "Sam's phone couldn't read 1 message, so rChat sent it again.")
        XCTAssertNil(resentRow.action)
        XCTAssertEqual(resentRow.ids, heldAgain)
        try world.rowBeforeDeadline("sam", "Alice",
                                    "1 message from Alice couldn't be decrypted on this phone. Alice has been told, so they can resend them.")
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.id), heldAgain)
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
        // Whatever else happens on the conversation, none of them goes again by itself, and
        // what Alice writes does not go to the stolen copy either.
        let later = try world.send("alice", to: "Sam", "later")
        try world.eventually("Alice's engine holds the message back", timeout: 20) {
            world.syncLog("alice").contains("1 message(s) to Sam wait until their new device is verified")
        }
        let alice = try world.list("alice", "Sam")
        XCTAssertEqual(alice.filter { held.contains($0.id) }.map(\.status), ["Not delivered", "Not delivered"])
        XCTAssertEqual(alice.first { $0.id == later }?.status, "Sending")
        XCTAssertFalse(alice.contains { $0.resent }, "\(alice)")
        XCTAssertEqual(try world.rows("alice", "Sam").map(\.text), [Self.newDevice, Self.notReadTwo])
        XCTAssertEqual(try world.list("mallory", "Alice").filter { $0.direction == "in" }.map(\.id), [])
        XCTAssertTrue(world.syncLog("alice").contains("0 resent automatically, 2 not delivered"), world.diagnostics())
        world.stopSync("alice")
        world.stopSync("mallory")
    }
}
