import Foundation
import XCTest

/// `rchat rename NAME NEW`: the conversation, its messages and rows stay under the new
/// name; a refused rename prints one line, exits 2 and changes nothing.
final class RenameCommandTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.accounts(["alice", "sam", "carol"])
    }

    override func tearDown() { box = nil }

    func list(_ name: String) throws -> [String] {
        let run = try box.rchat("alice", ["list", name, "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.lines
    }

    func testRenameKeepsTheConversationAndItsMessages() throws {
        for text in ["one", "two"] { XCTAssertEqual(try box.rchat("alice", ["send", "Sam", text]).status, 0) }
        let before = try list("Sam")
        XCTAssertEqual(before.count, 2)

        let rename = try box.rchat("alice", ["rename", "sam", "Samuel"])
        XCTAssertEqual(rename.status, 0, rename.stderr)
        XCTAssertEqual(rename.lines, ["renamed Sam to Samuel"])
        XCTAssertEqual(try list("Samuel"), before, "the same messages, statuses and ids")
        XCTAssertFailsCleanly(try box.rchat("alice", ["list", "Sam"]), status: 2, mentions: "no contact named Sam")
        XCTAssertEqual(try box.rchat("alice", ["contacts", "--json"]).lines,
                       [#"{"name":"Carol","state":"ok","unread":0,"timer":"off"}"#, #"{"name":"Samuel","state":"ok","unread":0,"timer":"off"}"#])
        XCTAssertEqual(try box.rchat("alice", ["send", "Samuel", "three"]).status, 0)
        XCTAssertEqual(try list("Samuel").count, 3)
        // Its own name in another case is not another contact's.
        XCTAssertEqual(try box.rchat("alice", ["rename", "Samuel", "SAMUEL"]).status, 0)
        XCTAssertEqual(try list("SAMUEL").count, 3)
    }

    func testRefusedRenamesSayWhyAndChangeNothing() throws {
        XCTAssertEqual(try box.rchat("alice", ["send", "Sam", "kept"]).status, 0)
        let contacts = try box.rchat("alice", ["contacts", "--json"]).stdout
        let conversation = try list("Sam")
        let cases: [([String], String)] = [
            (["Sam", "Carol"], "a contact named Carol already exists"),
            (["Sam", "carol"], "a contact named Carol already exists"),
            (["Sam", ""], "name must be"),
            (["Sam", " Sam"], "name must be"),
            (["Sam", "Sa\u{202E}m"], "name must be"),
            (["Sam", "two\nlines"], "name must be"),
            (["Sam", String(repeating: "x", count: 65)], "name must be"),
            (["Nobody", "Someone"], "no contact named Nobody"),
            (["Sam"], "missing NEW"),
            (["Sam", "A", "B"], "unexpected argument"),
        ]
        for (args, mention) in cases {
            XCTAssertFailsCleanly(try box.rchat("alice", ["rename"] + args), status: 2, mentions: mention)
        }
        XCTAssertEqual(try box.rchat("alice", ["contacts", "--json"]).stdout, contacts, "no name changed")
        XCTAssertEqual(try list("Sam"), conversation)
    }
}
