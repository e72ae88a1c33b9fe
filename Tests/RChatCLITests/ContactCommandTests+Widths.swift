import Foundation
import XCTest

extension ContactCommandTests {
    /// `rchat contacts` pads names by display columns: with a CJK name (two columns a
    /// letter), an emoji family, a combining mark and a VS16 emoji, the state starts at
    /// the same column on every line, as the C library (and so a terminal) counts it.
    func testContactsLineUpWideNames() throws {
        let names = ["Sam": "山田太郎", "carol": "👨‍👩‍👧 Fam", "dave": "Zoe\u{308}", "erin": "❤️ Ann"]
        for person in ["carol", "dave", "erin"] {
            XCTAssertEqual(try box.rchat(person, ["init", "--name", person.capitalized, "--relay", offlineRelay]).status, 0)
        }
        for (person, name) in names {
            let add = try box.rchat("alice", ["add", try code(person.lowercased()), "--name", name])
            XCTAssertEqual(add.status, 0, add.stderr)
        }
        let run = try box.rchat("alice", ["contacts"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.lines.count, 4, run.stdout)
        // The widest name is the family: 👨👩👧 (6 columns) and " Fam" (4).
        for line in run.lines {
            XCTAssertTrue(line.hasSuffix("ok"), line)
            XCTAssertEqual(cColumns(line.dropLast(2)), 12, "the state starts at column 12:\n\(run.stdout)")
        }
        XCTAssertTrue(run.lines.contains { $0.hasPrefix("Zoe\u{308}") }, "the mark is kept:\n\(run.stdout)")
        XCTAssertTrue(run.lines.contains { $0.hasPrefix("山田太郎  ") }, run.stdout)
    }
}
