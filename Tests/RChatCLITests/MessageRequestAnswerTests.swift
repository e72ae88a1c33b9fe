import Foundation
import XCTest

/// Message requests as a user answers them (`rchat accept`, `decline`, `block`, `safety`),
/// and a request from someone using a known contact's name with other keys (issue 26, items
/// 10–12): real `rchat-relay` and `rchat sync` processes, each account its own engine.
final class MessageRequestAnswerTests: EngineTestCase {
    static let namesakeRow = "Someone using the name Sam sent a message request with different keys. "
        + "If Sam reinstalled rChat, check their new code with them before you accept it."

    /// The rows of `rchat list NAME --json`, as shown.
    func rows(_ person: String, _ name: String) throws -> [String] {
        let run = try world.box.rchat(person, ["list", name, "--json"])
        try world.expectSuccess(run)
        return try run.lines.compactMap { line in
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
            return object["type"] as? String == "row" ? object["text"] as? String : nil
        }
    }

    /// Alice and the real Sam with a session, and a second account that also calls itself
    /// Sam (another install, its own keys) whose message reached Alice as a request. Returns
    /// the name the request is listed under and the id of its message.
    func aliceSamAndASecondSam() throws -> (request: String, id: String) {
        try world.pairWithSession()
        try world.makeAccount("newsam", name: "Sam")
        try world.add("newsam", "alice")
        try world.startSync("newsam")
        let id = try world.send("newsam", to: "Alice", "it's me, Sam, on a new install")
        var request = ""
        try world.eventually("Alice has the second Sam's message request", timeout: 20) {
            request = try self.world.contacts("alice").first { $0.state == "request" }?.name ?? ""
            return !request.isEmpty
        }
        return (request, id)
    }

    func testARequestUnderAKnownNameWithOtherKeysStaysApartAndLeavesTheConversationAlone() throws {
        let (request, first) = try aliceSamAndASecondSam()
        XCTAssertTrue(request.hasPrefix("Sam (") && request.hasSuffix(")"), "a distinct name in the list: \(request)")
        XCTAssertEqual(try world.contacts("alice").map(\.state).sorted(), ["ok", "request"])
        XCTAssertEqual(try world.list("alice", request).map(\.id), [first])
        try world.eventually("the row in Alice's conversation with Sam", timeout: 10) {
            try self.rows("alice", "Sam") == [Self.namesakeRow]
        }

        // A second request from the same keys: the same request, no second row.
        let second = try world.send("newsam", to: "Alice", "really, it's me")
        try world.eventually("the second message joins the request", timeout: 20) {
            try self.world.list("alice", request).map(\.id) == [first, second]
        }
        XCTAssertEqual(try rows("alice", "Sam"), [Self.namesakeRow], "once, never twice")

        // The conversation with the real Sam is as it was: ok, and messages flow both ways.
        XCTAssertEqual(try world.contacts("alice").first { $0.name == "Sam" }?.state, "ok")
        let toSam = try world.send("alice", to: "Sam", "still you?")
        try world.waitForStatus("alice", "Sam", toSam, "Delivered")
        let fromSam = try world.send("sam", to: "Alice", "still me")
        try world.waitForStatus("sam", "Alice", fromSam, "Delivered")
        XCTAssertTrue(try world.list("alice", "Sam").contains { $0.id == fromSam })
        XCTAssertFalse(try world.list("sam", "Alice").contains { $0.id == first || $0.id == second },
                       "the real Sam never sees the other Sam's messages")
        XCTAssertEqual(try world.contacts("alice").first { $0.name == "Sam" }?.state, "ok")
        XCTAssertEqual(try rows("alice", "Sam"), [Self.namesakeRow])

        // Sam is a contact, not a request: nothing to accept or decline.
        for verb in ["accept", "decline"] {
            XCTAssertFailsCleanly(try world.box.rchat("alice", [verb, "Sam"]), status: 2, mentions: "Sam is not a message request")
        }
        XCTAssertEqual(try world.contacts("alice").map(\.state).sorted(), ["ok", "request"])
    }

    func testAcceptPinsTheRequestsKeysAndTheConversationGoesBothWays() throws {
        let (request, first) = try aliceSamAndASecondSam()
        let accept = try world.box.rchat("alice", ["accept", request])
        XCTAssertEqual(accept.status, 0, accept.stderr)
        XCTAssertEqual(accept.lines, ["accepted the message request from \(request); the keys were not checked in person: "
                                      + "compare the safety number (rchat safety '\(request)') with them"])
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["ok", "ok"])
        // Both sides print one safety number for these keys.
        let here = try world.box.rchat("alice", ["safety", request])
        let there = try world.box.rchat("newsam", ["safety", "Alice"])
        XCTAssertEqual(here.status, 0, here.stderr)
        XCTAssertEqual(here.lines.count, 1)
        XCTAssertTrue(here.lines[0].hasPrefix("safety number: "), here.stdout)
        XCTAssertEqual(here.lines, there.lines)
        XCTAssertNotEqual(try world.box.rchat("alice", ["safety", "Sam"]).lines, here.lines, "the real Sam's keys are others")

        try world.waitForStatus("newsam", "Alice", first, "Delivered", timeout: 30)
        let reply = try world.send("alice", to: request, "hello, second Sam")
        try world.waitForStatus("alice", request, reply, "Delivered", timeout: 30)
        let next = try world.send("newsam", to: "Alice", "thanks")
        try world.waitForStatus("newsam", "Alice", next, "Delivered")
        XCTAssertEqual(try world.list("alice", request).map(\.id), [first, reply, next])
        XCTAssertEqual(try world.list("newsam", "Alice").map(\.id), [first, reply, next])
        // The real Sam's conversation is untouched.
        let toSam = try world.send("alice", to: "Sam", "and you")
        try world.waitForStatus("alice", "Sam", toSam, "Delivered")
    }

    func testAcceptReplacingSamRepinsSamsConversationToTheNewKeys() throws {
        let (request, first) = try aliceSamAndASecondSam()
        // The old install is gone: what Alice wrote to it last has no receipt.
        world.stopSync("sam")
        let unanswered = try world.send("alice", to: "Sam", "are you there?")
        try world.waitForStatus("alice", "Sam", unanswered, "Sent")
        let before = try world.list("alice", "Sam").map(\.id)
        let oldSafety = try world.box.rchat("alice", ["safety", "Sam"]).lines
        let accept = try world.box.rchat("alice", ["accept", request, "--replace", "Sam"])
        XCTAssertEqual(accept.status, 0, accept.stderr)
        XCTAssertEqual(accept.lines, ["Sam now has the keys of the message request from \(request); the keys were not checked "
                                      + "in person: compare the safety number (rchat safety Sam) with them"])
        // One conversation with Sam: what it held, the row, then the request's message.
        XCTAssertEqual(try world.contacts("alice").map(\.name), ["Sam"])
        XCTAssertEqual(try world.list("alice", "Sam").map(\.id), before + [first])
        XCTAssertEqual(try rows("alice", "Sam"), [Self.namesakeRow])
        let safety = try world.box.rchat("alice", ["safety", "Sam"]).lines
        XCTAssertNotEqual(safety, oldSafety)
        XCTAssertEqual(safety, try world.box.rchat("newsam", ["safety", "Alice"]).lines)

        // The conversation goes on with the new keys, both ways.
        try world.waitForStatus("newsam", "Alice", first, "Delivered", timeout: 30)
        let toNew = try world.send("alice", to: "Sam", "welcome back")
        try world.waitForStatus("alice", "Sam", toNew, "Delivered", timeout: 30)
        XCTAssertTrue(try world.list("newsam", "Alice").contains { $0.id == toNew })
        XCTAssertFalse(try world.list("sam", "Alice").contains { $0.id == toNew }, "the old keys get nothing more")
        let back = try world.send("newsam", to: "Alice", "thanks")
        try world.waitForStatus("newsam", "Alice", back, "Delivered")
        XCTAssertEqual(try world.list("alice", "Sam").last?.id, back)
        XCTAssertEqual(try world.contacts("alice").map(\.state), ["ok"])
        // As after Keys don't match and a new code: the old session is gone, so the new one is
        // a first meeting, not the old install starting over; what went to the old keys is
        // left as it is, never sent to the new ones by itself.
        XCTAssertEqual(try rows("alice", "Sam"), [Self.namesakeRow])
        XCTAssertEqual(try world.status("alice", "Sam", unanswered), "Sent")
        XCTAssertFalse(try world.list("newsam", "Alice").contains { $0.id == unanswered })
    }

    /// `rchat safety NAME` prints the line `rchat add` printed, and the other side prints the same.
    func testSafetyPrintsTheNumberAddPrinted() throws {
        try world.makeAccount("alice")
        try world.makeAccount("sam")
        let add = try world.box.rchat("alice", ["add", try world.code("sam")])
        try world.expectSuccess(add)
        let printed = try XCTUnwrap(add.lines.first { $0.hasPrefix("safety number: ") }, add.stdout)
        XCTAssertEqual(printed.count, "safety number: ".count + 12 * 5 + 11, printed)
        let safety = try world.box.rchat("alice", ["safety", "sam"])
        XCTAssertEqual(safety.status, 0, safety.stderr)
        XCTAssertEqual(safety.lines, [printed], "the same words and number as at add (names matched ignoring case)")
        try world.add("sam", "alice")
        XCTAssertEqual(try world.box.rchat("sam", ["safety", "Alice"]).lines, [printed])
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["safety"]), status: 2, mentions: "NAME")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["safety", "Sam", "Alice"]), status: 2, mentions: "safety")
    }

    func testDeclineAndBlockAndEveryRefusal() throws {
        try world.makeAccount("alice")
        try world.makeAccount("bob")
        try world.makeAccount("eve")
        try world.add("bob", "alice")
        try world.add("eve", "alice")
        try world.startSync("alice")
        try world.startSync("bob")
        try world.startSync("eve")
        let fromBob = try world.send("bob", to: "Alice", "hi from Bob")
        let fromEve = try world.send("eve", to: "Alice", "hi from Eve")
        try world.eventually("both requests at Alice", timeout: 20) {
            try self.world.contacts("alice") == [ListedContact(name: "Bob", state: "request", unread: 1),
                                                ListedContact(name: "Eve", state: "request", unread: 1)]
        }

        // Refusals: one line, exit 2, nothing stored.
        let home = world.box.path("alice-home")
        world.stopSync("alice")
        _ = try world.contacts("alice")   // the last connection to close leaves the file without its log
        let stored = world.box.snapshot(home)
        for args in [["accept", "Nobody"], ["decline", "Nobody"], ["safety", "Nobody"], ["accept", "Bob", "--replace", "Nobody"],
                     ["accept", "Bob", "--replace", "Eve"], ["accept"], ["accept", "Bob", "--replace"]] {
            let run = try world.box.rchat("alice", args)
            XCTAssertEqual(run.status, 2, "\(args): \(run.stderr)")
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, "\(args): \(run.stderr)")
            XCTAssertEqual(run.stdout, "", "\(args)")
        }
        XCTAssertEqual(world.box.snapshot(home), stored, "a refused command stores nothing")

        // Decline: the request is gone, its message is not shown, and it stays gone.
        let decline = try world.box.rchat("alice", ["decline", "Bob"])
        XCTAssertEqual(decline.status, 0, decline.stderr)
        XCTAssertEqual(decline.lines, ["declined the message request from Bob"])
        XCTAssertEqual(try world.contacts("alice").map(\.name), ["Eve"])
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["list", "Bob"]), status: 2, mentions: "no contact named Bob")
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["decline", "Bob"]), status: 2, mentions: "no contact named Bob")
        let search = try world.box.rchat("alice", ["search", "--all", "Bob"])
        XCTAssertFalse(search.stdout.contains(fromBob) || search.stdout.contains("hi from Bob"), search.stdout)

        // Block: listed as blocked; what it sends later is not kept.
        let block = try world.box.rchat("alice", ["block", "Eve"])
        XCTAssertEqual(block.status, 0, block.stderr)
        XCTAssertEqual(try world.contacts("alice"), [ListedContact(name: "Eve", state: "blocked", unread: 1)])
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["accept", "Eve", "--replace", "Eve"]), status: 2, mentions: "Eve")

        try world.startSync("alice")
        let laterBob = try world.send("bob", to: "Alice", "again from Bob")
        let laterEve = try world.send("eve", to: "Alice", "again from Eve")
        try world.waitForStatus("bob", "Alice", laterBob, "Sent", orHigher: true)
        try world.waitForStatus("eve", "Alice", laterEve, "Sent", orHigher: true)
        // Both reached Alice's engine, which kept neither.
        try world.eventually("Alice's engine dropped both", timeout: 20) {
            let log = self.world.syncLog("alice")
            return log.contains("dropped a message request from deleted Bob") && log.contains("dropped a message request from blocked Eve")
        }
        world.stopSync("alice")
        XCTAssertEqual(try world.status("bob", "Alice", laterBob), "Sent", "nothing says it was delivered")
        XCTAssertEqual(try world.contacts("alice"), [ListedContact(name: "Eve", state: "blocked", unread: 1)])
        XCTAssertEqual(try world.list("alice", "Eve").map(\.id), [fromEve])
    }
}
