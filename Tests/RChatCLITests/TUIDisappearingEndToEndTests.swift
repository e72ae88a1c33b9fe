import Foundation
import XCTest

extension TUIEndToEndTests {
    /// A disappearing message on Sam's screen: shown in the view (its clock starts there),
    /// it is gone from the view opened once its time ran out (RCHAT_FAKE_NOW); the timer's
    /// row and the header's timer stay.
    func testADisappearingMessageIsGoneFromTheViewOnceItsTimeRanOut() throws {
        try world.makePair("alice", "sam")
        try world.startSync("alice")
        try openView("sam")
        try screen("sam", "Alice listed, online") { $0.contains("Alice") && $0.contains("Online") }
        let control = try XCTUnwrap(try world.box.rchat("alice", ["timer", "Sam", "30s"]).lines.last)
        try world.waitForStatus("alice", "Sam", control, "Delivered", timeout: 20)
        let id = try world.send("alice", to: "Sam", "soon to vanish")
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 20)
        try screens.keys(session("sam"), "Enter")
        try screen("sam", "the message, the row and the timer") {
            $0.contains("soon to vanish") && $0.contains("Alice set disappearing messages to 30 seconds.") && $0.contains("timer 30 seconds")
        }
        try world.waitForStatus("alice", "Sam", id, "Read", timeout: 20)
        try screens.keys(session("sam"), "C-q")
        try screen("sam", "Sam's view quit cleanly") { $0.contains("[exited 0]") }
        try stopLinger("sam")
        world.stopSync("alice")
        let listed = try world.box.rchat("sam", ["list", "Alice", "--json"])
        let line = try XCTUnwrap(listed.lines.first { $0.contains(id) })
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let expires = try XCTUnwrap(object["expires_at"] as? Int, "its clock started when the view showed it")

        try openView("sam", env: Self.utf8.merging(["RCHAT_FAKE_NOW": String(expires + 1)]) { $1 })
        try screen("sam", "Alice listed") { $0.contains("Alice") }
        try screens.keys(session("sam"), "Enter")
        let after = try screen("sam", "the conversation without it") { $0.contains("Alice set disappearing messages to 30 seconds.") }
        XCTAssertFalse(after.contains("soon to vanish"), after)
        XCTAssertTrue(after.contains("timer 30 seconds"), after)
    }
}
