import Foundation
import XCTest

/// Issue 5: a contact who lost their state — a same-machine reinstall (automatic resend),
/// a new phone (Not delivered, Resend, re-verify, then automatic), and a stolen copy of the
/// account keys on another machine (never automatic). Real relay, real `rchat sync`.
final class RecoveryReinstallTests: RecoveryTestCase {
    static let resentTwo = "Sam's phone couldn't read 2 messages, so rChat sent them again."
    static let decryptedTwo = "2 messages from Alice couldn't be decrypted on this phone. Alice has been told, so they can resend them."
    static let notReadTwo = "2 messages couldn't be read on Sam's phone."

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

    /// A new phone (new device key, not pinned): Not delivered with Resend, nothing sent
    /// until `rchat resend`; after Alice enters Sam's new code, a reinstall on that phone
    /// goes the automatic way.
    func testNewPhoneNeedsResendUntilItsCodeIsEnteredAgain() throws {
        try chattingPair()
        let held = try messagesHeldForSam(2)
        try world.reinstall("sam", newPhone: true)
        try world.startSync("sam")

        let row = try world.rowBeforeDeadline("alice", "Sam", Self.notReadTwo)
        XCTAssertEqual(row.action, "resend")
        XCTAssertEqual(Set(row.ids), Set(held))
        try world.statusesBeforeDeadline("alice", "Sam", held, "Not delivered")
        try world.rowBeforeDeadline("sam", "Alice", Self.decryptedTwo)

        // Nothing goes before the user asks: a later message overtakes them and arrives alone.
        let barrier = try world.deliveredBarrier("alice", to: "Sam", "are you there?")
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.id), [barrier])
        let before = try world.list("alice", "Sam")
        XCTAssertEqual(before.filter { held.contains($0.id) }.map(\.status), ["Not delivered", "Not delivered"])
        XCTAssertFalse(before.contains { $0.resent }, "\(before)")
        XCTAssertEqual(try world.rows("alice", "Sam").map(\.text), [Self.notReadTwo], "no “so rChat sent” row")
        XCTAssertTrue(world.syncLog("alice").contains("0 resent automatically, 2 not delivered"), world.diagnostics())

        let resend = try world.box.rchat("alice", ["resend", "Sam", "--all"])
        XCTAssertEqual(resend.status, 0, resend.stderr)
        XCTAssertEqual(resend.lines, ["sending 2 messages again"])
        try world.statusesBeforeDeadline("alice", "Sam", held, "Delivered")
        try world.deliveredBarrier("alice", to: "Sam", "after the resend")
        let received = try world.list("sam", "Alice").filter { $0.direction == "in" }
        for id in held { XCTAssertEqual(received.filter { $0.id == id }.count, 1, "\(id) shown once: \(received)") }
        XCTAssertEqual(Set(received.filter { held.contains($0.id) }.map(\.text)), ["while you were away 1", "while you were away 2"])

        // Scanning Sam's new code in person pins the new device key.
        let add = try world.box.rchat("alice", ["add", try world.code("sam")])
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertTrue(add.stdout.contains("verified again"), add.stdout)
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["ok"])

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
        // Whatever else happens on the conversation, none of them goes again by itself.
        try world.deliveredBarrier("alice", to: "Sam", "later")
        let alice = try world.list("alice", "Sam")
        XCTAssertEqual(alice.filter { held.contains($0.id) }.map(\.status), ["Not delivered", "Not delivered"])
        XCTAssertFalse(alice.contains { $0.resent }, "\(alice)")
        XCTAssertFalse(try world.rows("alice", "Sam").contains { $0.text.contains("so rChat sent") })
        XCTAssertFalse(try world.list("mallory", "Alice").contains { held.contains($0.id) })
        XCTAssertTrue(world.syncLog("alice").contains("0 resent automatically, 2 not delivered"), world.diagnostics())
        world.stopSync("alice")
        world.stopSync("mallory")
    }
}
