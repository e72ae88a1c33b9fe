import Foundation
import RChatCore
import RChatTUI
import XCTest

/// Groups in the full-screen view, with real processes in tmux: the group is in the list, its
/// header says how many are in it, each incoming message is drawn with its author's name,
/// and what is typed goes to every member, its glyph Delivered only once every member
/// stored it.
extension TUIEndToEndTests {
    func testAGroupIsListedOpenedReadAndWrittenToInTheView() throws {
        for person in ["alice", "bob", "carol"] { try world.makeAccount(person) }
        for other in ["bob", "carol"] {
            try world.add("alice", other)
            try world.add(other, "alice")
        }
        try world.expectSuccess(try world.box.rchat("alice", ["group", "create", "Friends", "Bob", "Carol"]))
        try world.startSync("carol")
        try openView("alice")
        try screen("alice", "the group in Alice's list") { $0.contains("Friends") }
        try world.startSync("bob")
        try world.eventually("Bob and Carol hold the group", timeout: 20) {
            ["bob", "carol"].allSatisfy { (try? self.world.box.rchat($0, ["group", "members", "Friends"]).status) == 0 }
        }
        _ = try world.send("carol", to: "Friends", "carol says hi")
        try world.eventually("Bob stored Carol's message", timeout: 20) { try self.world.list("bob", "Friends").contains { $0.text == "carol says hi" } }
        world.stopSync("bob")
        try openView("bob", arguments: ["--open", "Friends"])
        let opened = try screen("bob", "the group open, its header and Carol's message by name") {
            $0.contains("3 members") && $0.contains("carol says hi")
        }
        XCTAssertNotNil(Self.conversationLine("carol says hi", in: opened)?.range(of: "Carol"), "drawn with its author's name:\n\(opened)")
        XCTAssertTrue(opened.contains("Alice created the group"), "the log's first change shown:\n\(opened)")
        XCTAssertFalse(opened.contains("could not be read"), "the group's draft is kept as a contact's is:\n\(opened)")

        try screens.type(session("bob"), "bob to all")
        try screen("bob", "bob to all Delivered, once Alice and Carol stored it", seconds: 30) {
            Self.glyph(of: "bob to all", in: $0) == Self.shown(.delivered)
        }
        try world.eventually("Carol stored Bob's message", timeout: 20) {
            try world.list("carol", "Friends").contains { $0.text == "bob to all" }
        }
        // Its details: each member's own timeline, under their name.
        try screens.keys(session("bob"), "Tab", "Up")
        try screen("bob", "Bob's message selected") { $0.screenLines.contains { $0.contains(Glyphs.unicode.selection) && $0.contains("bob to all") } }
        try screens.keys(session("bob"), "i")
        let details = try screen("bob", "the details with Alice's and Carol's timelines") {
            $0.contains("Message details") && $0.contains("Alice") && $0.contains("Carol") && $0.contains("Relay acknowledged")
        }
        XCTAssertEqual(details.components(separatedBy: "Relay acknowledged").count - 1, 2, "a timeline per member:\n\(details)")
        try screens.keys(session("bob"), "Escape")
        try screen("bob", "the details closed") { !$0.contains("Message details") }
        try screens.keys(session("bob"), "C-q")
        try screen("bob", "Bob's view quit cleanly") { $0.contains("[exited 0]") }
        try screens.keys(session("alice"), "C-q")
        try screen("alice", "Alice's view quit cleanly") { $0.contains("[exited 0]") }
    }
}
