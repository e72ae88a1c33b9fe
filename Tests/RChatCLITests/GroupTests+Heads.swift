import Foundation
import RChatSQL
import XCTest

/// Logs that compare themselves (issue 30, anti-entropy; docs/PROTOCOL.md "Groups on the
/// wire"): a member whose log takes changes tells the others its heads, each side tells the
/// other its heads at each session, and every group message carries them — so a change one
/// member never had reaches them from whoever holds it, while nobody writes too.
extension GroupTests {
    /// Whether `person` holds a group of that name.
    func holds(_ person: String, _ group: String) -> Bool {
        (try? world.box.rchat(person, ["group", "members", group]).status) == 0
    }

    /// Alice renames Friends to Climbing, and her device loses Bob's copy of the rename before
    /// the relay took it (Carol's sync stopped first when `carolAway`).
    func renameThatBobNeverHad(carolAway: Bool = false) throws {
        try friends(["Bob", "Carol"])
        if carolAway { world.stopSync("carol") }
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
    }

    /// Carol takes the rename and tells the others her log's heads, and Alice's sessions tell
    /// hers: Bob's differ, he tells them every change he holds, and whichever answers first —
    /// Carol, whom he knows only through the group, or Alice — hands him the rename, shown
    /// once, while nobody writes. (That the one who took it tells the others is the
    /// simulation's regression seeds 272 and 301.)
    func testAChangeAMemberNeverHadReachesThemWhileNobodyWrites() throws {
        try renameThatBobNeverHad()
        try world.eventually("Bob holds the rename", timeout: 30) { self.holds("bob", "Climbing") }
        let handed = "Bob's log of Climbing lacks 1 change(s): they are handed them"
        XCTAssertTrue(world.syncLog("carol").contains(handed) || world.syncLog("alice").contains(handed),
                      world.syncLog("carol") + world.syncLog("alice"))
        XCTAssertFailsCleanly(try world.box.rchat("bob", ["group", "members", "Friends"]), status: 2, mentions: "Friends")
        let texts = try groupList("bob", "Climbing").compactMap { $0["text"] as? String }
        XCTAssertEqual(texts.filter { $0 == "Alice renamed the group \u{201C}Climbing\u{201D}." }.count, 1, "told as Alice made it, once: \(texts)")
        // Carol writes: Delivered to both, shown once.
        let id = try world.send("carol", to: "Climbing", "on the wall at six")
        try world.eventually("Carol's message Delivered to both", timeout: 30) {
            let m = try self.groupList("carol", "Climbing").first { $0["id"] as? String == id }
            return m?["status"] as? String == "Delivered"
        }
        XCTAssertEqual(try groupList("bob", "Climbing").filter { $0["id"] as? String == id }.count, 1, "shown once")
        assertDeliveredNeverGoesBack(world)
    }

    /// With Carol away, no one else holds it: at Alice's next session with Bob each tells the
    /// other the heads of their logs (`groupHeads`), Bob's differ, and Alice hands him the rename.
    func testAChangeAMemberNeverHadReachesThemAtTheirNextSession() throws {
        try renameThatBobNeverHad(carolAway: true)
        try world.eventually("Bob holds the rename", timeout: 30) { self.holds("bob", "Climbing") }
        XCTAssertTrue(world.syncLog("alice").contains("Bob's log of Climbing lacks 1 change(s): they are handed them"), world.syncLog("alice"))
        let texts = try groupList("bob", "Climbing").compactMap { $0["text"] as? String }
        XCTAssertEqual(texts.filter { $0 == "Alice renamed the group \u{201C}Climbing\u{201D}." }.count, 1, "\(texts)")
        try world.startSync("carol")
        try world.eventually("Carol took the rename", timeout: 30) { self.holds("carol", "Climbing") }
    }
}
