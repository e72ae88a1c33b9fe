import Foundation
import XCTest

/// `rchat search NAME|--all WORDS... [--json]`, run as a user runs it: real `rchat`
/// processes over real homes. Words are words, never search syntax; bad input is one line
/// and exit 2.
final class SearchCommandTests: XCTestCase {
    var box: Sandbox!
    /// Times fixed, local time UTC: what the human output prints is known.
    let env = ["TZ": "UTC"]

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.accounts(["alice", "sam", "carol"])
    }

    override func tearDown() { box = nil }

    @discardableResult
    func send(_ to: String, _ text: String, at time: Int) throws -> String {
        let run = try box.rchat("alice", ["send", to, text], env: ["RCHAT_FAKE_NOW": String(time)])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.lines[0]
    }

    /// The home first, so that words after `--` stay words.
    func search(_ args: [String]) throws -> Run {
        try box.run(Binaries.path("rchat"), ["--home", box.path("alice-home"), "--device-dir", box.path("alice-device"), "search"] + args,
                    env: env)
    }

    func json(_ line: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
    }

    func testFindsMessagesNewestFirstInOneConversationOrAll() throws {
        let first = try send("Sam", "Quick question about the café", at: 1_700_000_000)
        try send("Sam", "unrelated", at: 1_700_000_060)
        let second = try send("Carol", "quickly, the CAFE closes\nat six", at: 1_700_000_120)
        try send("Sam", "only quick", at: 1_700_000_180)

        let all = try search(["--all", "cafe", "QUICK", "--json"])
        XCTAssertEqual(all.status, 0, all.stderr)
        let hits = try all.lines.map(json)
        XCTAssertEqual(hits.map { $0["id"] as? String }, [second, first], "every word, newest first")
        XCTAssertEqual(hits.map { $0["conversation"] as? String }, ["Carol", "Sam"])
        XCTAssertEqual(hits.map { $0["direction"] as? String }, ["out", "out"])
        XCTAssertEqual(hits.map { $0["at"] as? Int }, [1_700_000_120, 1_700_000_000])
        XCTAssertEqual(hits.first?["snippet"] as? String, "quickly, the CAFE closes at six")
        // The index is the message's place in `rchat list`.
        let listed = try box.rchat("alice", ["list", "Sam", "--json"]).lines
        let index = try XCTUnwrap(hits[1]["index"] as? Int)
        XCTAssertEqual(try json(listed[index])["id"] as? String, first)

        let sam = try search(["Sam", "quick", "--json"])
        XCTAssertEqual(sam.status, 0, sam.stderr)
        XCTAssertEqual(try sam.lines.map(json).map { $0["conversation"] as? String }, ["Sam", "Sam"])

        // For people: the conversation, the local time, who wrote it, the text around the words.
        let human = try search(["--all", "cafe"])
        XCTAssertEqual(human.status, 0, human.stderr)
        XCTAssertEqual(human.lines, ["Carol  2023-11-14 22:15  You: quickly, the CAFE closes at six",
                                     "Sam  2023-11-14 22:13  You: Quick question about the café"])
        let none = try search(["Sam", "zebra"])
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertEqual(none.lines, ["no message has: zebra"])
        XCTAssertEqual(try search(["Sam", "zebra", "--json"]).stdout, "")
    }

    func testPunctuationIsNeverSearchSyntax() throws {
        let id = try send("Sam", "say \"hi\" NEAR me (quick-fix) a*b text:hello and or not", at: 1_700_000_000)
        try send("Sam", "an unrelated line", at: 1_700_000_060)
        for words in [["\"hi\""], ["NEAR(me"], ["quick-fix"], ["--", "-fix"], ["a*b"], ["text:hello"], ["say", "OR"], ["NOT", "me"],
                      ["{text}:", "hello"], ["hi\""], ["say", "*", "\""]] {
            let run = try search(["Sam", "--json"] + words)
            XCTAssertEqual(run.status, 0, "\(words): \(run.stderr)")
            XCTAssertEqual(try run.lines.map(json).map { $0["id"] as? String }, [id], "\(words)")
        }
        let or = try search(["Sam", "OR", "unrelated"])
        XCTAssertEqual(or.lines, ["no message has: OR unrelated"], "OR is a word like any other")
    }

    func testBadInputIsOneLineAndExit2() throws {
        try send("Sam", "kept", at: 1_700_000_000)
        XCTAssertFailsCleanly(try search(["Nobody", "kept"]), status: 2, mentions: "no contact named Nobody")
        XCTAssertFailsCleanly(try search(["Sam"]), status: 2, mentions: "nothing to search for")
        XCTAssertFailsCleanly(try search(["--all"]), status: 2, mentions: "nothing to search for")
        XCTAssertFailsCleanly(try search(["Sam", "*", "\"", "--", "-"]), status: 2, mentions: "nothing to search for")
        XCTAssertFailsCleanly(try search([]), status: 2, mentions: "missing NAME")
        XCTAssertFailsCleanly(try search(["Sam", "-x"]), status: 2, mentions: "-x")
        XCTAssertFailsCleanly(try search(["--all"] + (1...17).map { "w\($0)" }), status: 2, mentions: "at most 16")

        // A deleted conversation is searched no more.
        XCTAssertEqual(try box.rchat("alice", ["delete", "Sam"]).status, 0)
        XCTAssertEqual(try search(["--all", "kept", "--json"]).stdout, "")
        XCTAssertFailsCleanly(try search(["Sam", "kept"]), status: 2, mentions: "no contact named Sam")
    }

    func testWhatOthersWroteReachesTheTerminalOnlyAsStandIns() throws {
        try send("Sam", "bell\u{7} and \u{1b}[2J clear, \u{202e}reversed", at: 1_700_000_000)
        let human = try search(["Sam", "bell"])
        XCTAssertEqual(human.status, 0, human.stderr)
        XCTAssertFalse(human.stdout.unicodeScalars.contains { $0 == "\u{7}" || $0 == "\u{1b}" || $0 == "\u{202e}" }, human.stdout)
        XCTAssertTrue(human.stdout.contains("␛"), human.stdout)
        let json = try search(["Sam", "bell", "--json"])
        XCTAssertTrue(json.stdout.contains("\\u001b") && json.stdout.contains("\\u0007"), json.stdout)
        XCTAssertFalse(json.stdout.unicodeScalars.contains { $0 == "\u{1b}" }, json.stdout)
    }
}

/// A message received through a real relay and engine is found by search as soon as it is
/// listed: the engine's batch insert indexes it in the same transaction.
final class SearchReceivedTests: EngineTestCase {
    func testAReceivedMessageIsFound() throws {
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        let id = try world.send("alice", to: "Sam", "the pineapple arrives on tuesday")
        try world.waitForStatus("alice", "Sam", id, "Delivered")
        let run = try world.box.rchat("sam", ["search", "Alice", "pineapple", "tues", "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.lines.count, 1, run.stdout)
        let hit = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.lines[0].utf8)) as? [String: Any])
        XCTAssertEqual(hit["id"] as? String, id)
        XCTAssertEqual(hit["direction"] as? String, "in")
        XCTAssertEqual(hit["conversation"] as? String, "Alice")
    }
}
