import Foundation
import RChatCore
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A relay that stops reading (SIGSTOP) while megabytes wait for it: the engine's other
/// relay, the commands and `rchat sync --seconds S` go on as if nothing happened.
final class EngineStalledRelayTests: EngineTestCase {
    func accountKey(_ person: String) throws -> [UInt8] {
        try ContactCode(parsing: world.code(person)).accountKey
    }

    /// Sam on the world's relay, Alice and Bob on a second one. A conversation lives on the
    /// relay of the account whose key sorts first: Alice's and Sam's accounts are made again
    /// (both: against an Alice whose key sorts near the start, a new Sam alone would almost
    /// never sort first) until his key sorts before hers, so Alice–Sam is on the first relay
    /// and Alice–Bob on the second.
    func makeAccountsOnTwoRelays() throws {
        let second = try world.startSecondRelay()
        for attempt in 0..<64 {
            if attempt > 0 {
                for folder in ["sam-home", "sam-device", "alice-home", "alice-device"] {
                    try FileManager.default.removeItem(atPath: world.box.path(folder))
                }
            }
            try world.makeAccount("alice", relay: second)
            try world.makeAccount("sam")
            if try accountKey("sam").lexicographicallyPrecedes(try accountKey("alice")) { break }
        }
        try world.makeAccount("bob", relay: second)
        XCTAssertTrue(try accountKey("sam").lexicographicallyPrecedes(try accountKey("alice")), "Alice–Sam lives on Sam's relay")
        for (a, b) in [("alice", "sam"), ("sam", "alice"), ("alice", "bob"), ("bob", "alice")] { try world.add(a, b) }
    }

    func testARelayThatStopsReadingDoesNotStopTheOtherRelayNorSyncSeconds() throws {
        try makeAccountsOnTwoRelays()
        try world.startSync("sam")
        try world.startSync("bob")
        let seconds = 40.0
        let started = Date()
        try world.startSync("alice", seconds: Int(seconds))
        let warmUps = [try world.send("alice", to: "Sam", "warm-up Sam"), try world.send("alice", to: "Bob", "warm-up Bob")]
        try world.waitForStatus("alice", "Sam", warmUps[0], "Delivered")
        try world.waitForStatus("alice", "Bob", warmUps[1], "Delivered")

        world.freezeRelay()
        defer { world.thawRelay() }
        // 240 messages of 60,000 bytes: 14.4 MB for a relay that reads nothing, far more
        // than the kernel's buffers on both ends of the connection hold.
        let text = String(repeating: "0123456789", count: 6_000)
        var toSam: [String] = []
        for i in 0..<240 { toSam.append(try world.send("alice", to: "Sam", "\(i) \(text)".prefix(60_000).description)) }

        // The other relay still carries Alice's traffic, both ways, while all that waits.
        let frozenFor = Date()
        let toBob = try world.send("alice", to: "Bob", "still flowing")
        try world.waitForStatus("alice", "Bob", toBob, "Delivered", timeout: 15)
        let bobDelivered = Date().timeIntervalSince(frozenFor)
        let fromBob = try world.send("bob", to: "Alice", "and back")
        try world.waitForStatus("bob", "Alice", fromBob, "Delivered", timeout: 15)
        XCTAssertTrue(try world.list("alice", "Bob").contains { $0.id == fromBob })

        // Nothing the frozen relay never acknowledged is Sent.
        let listed = try world.list("alice", "Sam").filter { toSam.contains($0.id) }
        XCTAssertEqual(listed.count, toSam.count)
        XCTAssertTrue(listed.allSatisfy { $0.status == "Sending" || $0.status == "Not confirmed" },
                      "statuses: \(Set(listed.compactMap(\.status)))")

        // `sync --seconds` ends on time, cleanly.
        let margin = 5.0
        let status = world.waitForSyncToEnd("alice", timeout: max(0, started.addingTimeInterval(seconds + margin).timeIntervalSinceNow))
        XCTAssertEqual(status, 0, "Alice's sync --seconds \(Int(seconds)) ended by itself\n\(world.diagnostics())")
        let ended = Date().timeIntervalSince(started)
        XCTAssertLessThan(ended, seconds + margin)
        print(String(format: "stalled relay: Alice → Bob Delivered %.2f s after it was sent; sync --seconds %.0f ended after %.2f s",
                     bobDelivered, seconds, ended))

        // The relay reads again: everything reaches Sam, once, and is Delivered.
        world.thawRelay()
        try world.startSync("alice")
        try world.eventually("all 240 are Delivered", timeout: 90) {
            try self.world.list("alice", "Sam").filter { toSam.contains($0.id) }.allSatisfy { $0.status == "Delivered" }
        }
        let received = try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.id)
        XCTAssertEqual(received.count, toSam.count + 1, "each once")
        XCTAssertEqual(Set(received), Set([warmUps[0]] + toSam))
        world.stopSync("alice")
        world.stopSync("sam")
        world.stopSync("bob")
    }
}
