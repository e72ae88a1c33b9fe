import Foundation
import RChatSQL
import XCTest

/// Logs that compare themselves (issue 30, anti-entropy; docs/PROTOCOL.md "Groups on the
/// wire"): every group message carries its author's log heads, so a change one member never
/// had reaches them from whoever writes next — here from a member they know only through
/// the group.
extension GroupTests {
    /// Whether `person` holds a group of that name.
    func holds(_ person: String, _ group: String) -> Bool {
        (try? world.box.rchat(person, ["group", "members", group]).status) == 0
    }

    /// Alice renames Friends to Climbing, and her device loses Bob's copy of the rename before
    /// the relay took it; Carol takes hers.
    func renameThatBobNeverHad() throws {
        try friends(["Bob", "Carol"])
        world.stopSync("alice")
        try world.expectSuccess(try world.box.rchat("alice", ["group", "rename", "Friends", "Climbing"]))
        let db = try Database(path: world.box.path("alice-home") + "/rchat.db", fileMode: 0o600)
        try db.execute("""
            DELETE FROM outbox WHERE member_id = (SELECT id FROM contacts WHERE name = 'Bob')
                AND message_rowid = (SELECT max(rowid) FROM messages WHERE conversation_id < 0)
            """)
        XCTAssertEqual(db.changes, 1)
        db.close()
        try world.startSync("alice")
        try world.eventually("Carol took the rename", timeout: 30) { self.holds("carol", "Climbing") }
        XCTAssertTrue(holds("bob", "Friends"), "Bob never had it")
    }

    func testAChangeAMemberNeverHadReachesThemFromTheNextMessageOfAnyMember() throws {
        try renameThatBobNeverHad()

        // Carol writes: her heads name the rename, Bob asks her for it and she hands it on.
        let id = try world.send("carol", to: "Climbing", "on the wall at six")
        try world.eventually("Bob holds the rename", timeout: 30) { self.holds("bob", "Climbing") }
        XCTAssertTrue(world.syncLog("carol").contains("Bob's log of Climbing lacks 1 change(s): they are handed them"), world.syncLog("carol"))
        XCTAssertFailsCleanly(try world.box.rchat("bob", ["group", "members", "Friends"]), status: 2, mentions: "Friends")
        try world.eventually("Carol's message Delivered to both", timeout: 30) {
            let m = try self.groupList("carol", "Climbing").first { $0["id"] as? String == id }
            return m?["status"] as? String == "Delivered"
        }
        XCTAssertEqual(try groupList("bob", "Climbing").filter { $0["id"] as? String == id }.count, 1, "shown once")
        assertDeliveredNeverGoesBack(world)
    }

    /// The same loss while nobody writes: at Bob's next session each member tells him the
    /// heads of their logs (`groupHeads`), his differ, and the rename reaches him, once.
    func testAChangeAMemberNeverHadReachesThemAtTheirNextSessionWhileNobodyWrites() throws {
        try renameThatBobNeverHad()
        world.stopSync("bob")
        try world.startSync("bob")
        try world.eventually("Bob holds the rename", timeout: 30) { self.holds("bob", "Climbing") }
        let texts = try groupList("bob", "Climbing").compactMap { $0["text"] as? String }
        XCTAssertEqual(texts.filter { $0 == "Alice renamed the group \u{201C}Climbing\u{201D}." }.count, 1, "\(texts)")
    }
}
