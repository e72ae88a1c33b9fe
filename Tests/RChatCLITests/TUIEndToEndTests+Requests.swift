import Foundation
import XCTest

/// A message request answered in a real view (issue 26, items 10 and 11): someone using
/// Sam's name with other keys writes to Alice; her view lists it apart, says in its header
/// what each key does, and `a` then `r` gives Sam's conversation the new keys, after which
/// messages go both ways with the new install.
extension TUIEndToEndTests {
    func testARequestUsingSamsNameIsAcceptedInTheViewReplacingSamsKeys() throws {
        try world.makePair("alice", "sam")
        try world.makeAccount("newsam", name: "Sam")
        try world.add("newsam", "alice")
        try world.startSync("newsam")
        let first = try world.send("newsam", to: "Alice", "it is me on a new install")
        try openView("alice", columns: 150, rows: 30)
        try screen("alice", "the request listed apart from Sam") { s in
            s.contains("Sam (") && s.contains("request") && s.contains("Online")
        }
        // Sam's conversation has the row and stays as it was.
        try screens.type(session("alice"), "/open Sam")
        let sam = try screen("alice", "the row in Sam's conversation") { s in
            s.screenLines.first == " rChat · Sam" && s.contains("Someone using the name Sam sent a message request with different keys.")
        }
        XCTAssertTrue(sam.contains("Message Sam"), "Sam can be written to: \(sam)")
        // The request, by its own name (Tab completes it).
        try screens.keys(session("alice"), "/open Sam (", literal: true)
        try screens.keys(session("alice"), "Tab")
        try screen("alice", "the request's name completed") { Self.composerRow($0).contains("/open Sam (") && Self.composerRow($0).hasSuffix(")") }
        try screens.keys(session("alice"), "Enter")
        let header = try screen("alice", "the request's header says what each key does") { s in
            s.screenLines.first?.contains("a accept (pins the keys in their code, or gives them to Sam)") ?? false
        }
        XCTAssertTrue(header.screenLines.first?.contains("d decline (deletes it)") ?? false, header)
        XCTAssertTrue(header.screenLines.first?.contains("b block") ?? false, header)
        XCTAssertNotNil(Self.conversationLine("it is me on a new install", in: header), header)

        try screens.keys(session("alice"), "a")
        try screen("alice", "asked whether to replace Sam's keys") { $0.contains("r  replace: Sam's conversation goes on with these keys") }
        try screens.keys(session("alice"), "r")
        let replaced = try screen("alice", "Sam's conversation, with the row and the request's message") { s in
            // The whole frame, not one caught while the view was still drawing it (its header
            // already Sam's, its status line still the request's).
            (s.screenLines.first?.contains("Sam") ?? false) && !(s.screenLines.first?.contains("request") ?? true)
                && s.contains("Someone using the name Sam sent a message request") && Self.conversationLine("it is me on a new install", in: s) != nil
                && !s.contains("Message request: a accepts")
        }
        XCTAssertTrue(replaced.contains("The keys were not checked in person: /safety"), replaced)
        XCTAssertFalse(replaced.screenLines.contains { $0.hasPrefix(" Sam (") || $0.hasPrefix("▶Sam (") },
                       "the request is gone from the list: \(replaced)")

        // Alice writes in Sam's conversation: it reaches the new install and comes back Delivered.
        try screens.type(session("alice"), "welcome back")
        try world.eventually("the new install has Alice's message", timeout: 30) {
            try self.world.list("newsam", "Alice").contains { $0.text == "welcome back" }
        }
        try world.eventually("Delivered at Alice", timeout: 15) {
            try self.world.list("alice", "Sam").first { $0.text == "welcome back" }?.status == "Delivered"
        }
        try world.waitForStatus("newsam", "Alice", first, "Delivered")
        try world.send("newsam", to: "Alice", "thanks, Alice")
        try screen("alice", "the new install's answer on screen") { Self.conversationLine("thanks, Alice", in: $0) != nil }

        // /safety shows the number both sides print.
        try screens.type(session("alice"), "/safety")
        let expected = try world.box.rchat("newsam", ["safety", "Alice"]).lines.first ?? "?"
        let groups = expected.dropFirst("safety number: ".count).split(separator: " ")
        XCTAssertEqual(groups.count, 12, expected)
        try screen("alice", "the safety number, in two rows of six groups") { s in
            s.contains("safety number: " + groups.prefix(6).joined(separator: " ")) && s.contains(groups.suffix(6).joined(separator: " "))
        }
    }
}
