import Foundation
import XCTest

/// Files in a group (issue 30): one sent copy, each member's item and chunks over their own
/// channel, each delivery Delivered only when that member has the whole file (fsynced, its
/// hash checked), the message Delivered only when every member has.
extension GroupTests {
    private func randomFile(_ name: String, bytes: Int) throws -> (path: String, data: Data) {
        var g = SystemRandomNumberGenerator()
        let data = Data((0..<bytes).map { _ in UInt8(truncatingIfNeeded: g.next()) })
        let path = world.box.path(name)
        try data.write(to: URL(fileURLWithPath: path))
        return (path, data)
    }

    private func message(_ person: String, _ id: String) throws -> [String: Any]? {
        try groupList(person, "Friends").first { $0["id"] as? String == id }
    }

    private func deliveries(_ person: String, _ id: String) throws -> [String: String] {
        let list = (try message(person, id)?["deliveries"] as? [[String: String]]) ?? []
        return Dictionary(uniqueKeysWithValues: list.map { ($0["member"]!, $0["status"]!) })
    }

    /// The bytes of the file `id` as `person` received it (nil until it is whole there).
    private func receivedBytes(_ person: String, _ id: String) throws -> Data? {
        guard let file = try message(person, id)?["attachment"] as? [String: Any], let path = file["path"] as? String else { return nil }
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    func testAFileReachesEveryMemberWholeAndEachDeliveryIsDeliveredOnItsOwn() throws {
        try friends(["Bob", "Carol"])
        world.stopSync("carol")
        let (path, data) = try randomFile("plans.bin", bytes: 3 * 1024 * 1024 + 77)
        let sent = try world.box.rchat("alice", ["send", "Friends", "--file", path])
        try world.expectSuccess(sent)
        let id = try XCTUnwrap(sent.lines.first)

        // Bob has it whole; Carol, away, has nothing yet: the relay holds her copy.
        try world.eventually("Bob has the whole file", timeout: 60) { try self.deliveries("alice", id)["Bob"] == "Delivered" }
        try world.eventually("the relay took Carol's copy whole", timeout: 60) { try self.deliveries("alice", id)["Carol"] == "Sent" }
        XCTAssertEqual(try message("alice", id)?["status"] as? String, "Sent", "Delivered only when every member has it")
        XCTAssertEqual(try receivedBytes("bob", id), data, "the same bytes")
        XCTAssertEqual(try message("bob", id)?["from"] as? String, "Alice")
        XCTAssertEqual((try message("bob", id)?["attachment"] as? [String: Any])?["received"] as? Int, data.count)

        // Carol back: her copy arrives and the message is Delivered.
        try world.startSync("carol")
        try world.eventually("Carol has it and the message is Delivered", timeout: 60) {
            try self.message("alice", id)?["status"] as? String == "Delivered"
        }
        XCTAssertEqual(try receivedBytes("carol", id), data)
        XCTAssertEqual(try groupList("carol", "Friends").filter { $0["id"] as? String == id }.count, 1, "shown once")
        let out = world.box.path("carol-saved.bin")
        let save = try world.box.rchat("carol", ["save", "Friends", id, out])
        try world.expectSuccess(save)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), data)

        // Carol writes a file to the group: Bob, whom she knows only through it, takes it
        // over the channel the two opened (chunks, progress and Delivered name the group's message).
        let (small, smallData) = try randomFile("note.bin", bytes: 200_000)
        let fromCarol = try XCTUnwrap(try world.box.rchat("carol", ["send", "Friends", "--file", small]).lines.first)
        try world.eventually("Alice and Bob have Carol's file", timeout: 60) {
            try self.message("carol", fromCarol)?["status"] as? String == "Delivered"
        }
        XCTAssertEqual(try receivedBytes("bob", fromCarol), smallData)
        XCTAssertEqual(try message("bob", fromCarol)?["from"] as? String, "Carol")
        XCTAssertEqual(try receivedBytes("alice", fromCarol), smallData)
        world.assertStatusesNeverLowered()
    }
}
