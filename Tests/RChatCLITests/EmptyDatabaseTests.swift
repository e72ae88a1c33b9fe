import Foundation
import XCTest

/// A 0-byte `rchat.db` (an `rchat init` killed before its first write) holds no account:
/// every command that needs one says so in one line, exits 1, and leaves the file as it
/// was — no SQLite header, log or index written into the home (issue 27, finding 13).
final class EmptyDatabaseTests: XCTestCase {
    func testAFailedCommandLeavesAnEmptyDatabaseEmpty() throws {
        let box = try Sandbox()
        let home = box.path("alice-home")
        XCTAssertEqual(mkdir(home, 0o700), 0)
        XCTAssertTrue(FileManager.default.createFile(atPath: "\(home)/rchat.db", contents: Data(), attributes: [.posixPermissions: 0o600]))
        for args in [["contacts"], ["list", "Sam"], ["send", "Sam", "hello"], ["code"], ["sync", "--seconds", "1"]] {
            let run = try box.rchat("alice", args)
            XCTAssertFailsCleanly(run, status: 1, mentions: "no account")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: home), ["rchat.db"],
                           "`rchat \(args.joined(separator: " "))` wrote into the home")
            XCTAssertEqual(FileManager.default.contents(atPath: "\(home)/rchat.db"), Data(),
                           "`rchat \(args.joined(separator: " "))` wrote into the empty rchat.db")
        }
        // `rchat init` still makes the account in it.
        let created = try box.rchat("alice", ["init", "--name", "Alice", "--relay", offlineRelay])
        XCTAssertEqual(created.status, 0, created.stderr)
        XCTAssertEqual(try box.rchat("alice", ["contacts"]).status, 0)
    }
}
