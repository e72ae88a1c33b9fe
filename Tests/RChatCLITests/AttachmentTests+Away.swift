import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A file keeps going to the relay while its receiver is away (issue 26, item 6): real
/// `rchat-relay` and `rchat sync` processes; nothing but the file is sent, so nothing else
/// wakes the sender.
extension AttachmentTests {
    static let chunkBytes = 60 * 1024

    /// Waits until `person`'s partial file of an arriving file has bytes in it: a `stat` every
    /// few milliseconds, so that the receiver is stopped early in the file (a poll through
    /// `rchat list` takes long enough for it to store much of it).
    func waitForPartialFile(_ person: String, timeout: Double = 60) throws {
        let directory = world.box.path("\(person)-home/files/partial")
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names where name.hasSuffix(".part") {
                let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int) ?? 0
                if size > 0 { return }
            }
            waitUntilDeadline(min(deadline, Date(timeIntervalSinceNow: 0.005)))
        }
        throw TimedOut(what: "\(person)'s partial file", seconds: timeout, context: world.diagnostics())
    }

    /// The bytes of file `id` stored at `person`'s: 0 while its message is not stored yet (a
    /// receiver stopped before its first batch committed).
    func storedSoFar(_ person: String, _ name: String, _ id: String) throws -> Int {
        try world.list(person, name).contains { $0.id == id } ? received(person, name, id) : 0
    }

    /// `rchat list NAME`'s line of message `id`.
    func listLine(_ person: String, _ name: String, _ id: String) throws -> String {
        let run = try world.box.rchat(person, ["list", name])
        try world.expectSuccess(run)
        return run.lines.first { $0.hasSuffix(id) } ?? ""
    }

    /// Alice sends a 16 MiB file (274 chunks: more than the sender's window, 128 chunks ahead
    /// of what the receiver reported) and Sam's sync is stopped (`stop`) as soon as it has
    /// begun storing it, before that window could cover the rest; then the relay must take
    /// the whole file with nothing else sent, and Sam's next sync gets it whole, once.
    func fileGoesOnAfterTheReceiverStops(_ name: String, _ stop: () -> Void, while what: String) throws {
        try chattingPair()
        let (path, data) = try randomFile(name, bytes: 16 * 1024 * 1024)
        let chunks = (data.count + Self.chunkBytes - 1) / Self.chunkBytes
        let id = try sendFile("alice", to: "Sam", path)
        try waitForPartialFile("sam")
        stop()
        let here = try storedSoFar("sam", "Alice", id) / Self.chunkBytes
        XCTAssertLessThan(here, chunks - 128, "Sam stopped mid-file, before the sender's window could cover the rest")
        try world.eventually("the relay takes the whole file while \(what)", timeout: 60) {
            try self.received("alice", "Sam", id) == data.count
        }
        try world.waitForStatus("alice", "Sam", id, "Sent", timeout: 30)
        XCTAssertNil(try attachment("alice", "Sam", id)["waiting"], "nothing waits once the relay took it all")
        XCTAssertFalse(try listLine("alice", "Sam", id).contains("waiting"))

        world.crashSync("sam")
        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 60)
        let got = try XCTUnwrap(try attachment("sam", "Alice", id)["path"] as? String)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: got)), data)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.id == id }.count, 1, "shown once")
        XCTAssertTrue(world.syncLog("sam").contains("a file from Alice arrived whole (\(data.count) bytes, \(chunks) chunks, \(chunks - here) written in this run)"),
                      world.diagnostics())
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Sam's sync is SIGKILLed while the file arrives: Alice's sync uploads the rest to the
    /// relay by itself (her window ahead of Sam's reports no longer holds it back).
    func testAFileKeepsGoingToTheRelayWhileItsReceiverIsAway() throws {
        try fileGoesOnAfterTheReceiverStops("away.bin", { world.crashSync("sam") }, while: "Sam is away")
    }

    /// Sam's sync is frozen (SIGSTOP) mid-file: connected, it stores and reports nothing. Once
    /// its last report is stale the sender's window no longer holds it back.
    func testAReceiverThatStopsReportingNoLongerHoldsTheFileBack() throws {
        try fileGoesOnAfterTheReceiverStops("frozen.bin", { world.freezeSync("sam") }, while: "Sam says nothing")
    }

    /// With Sam away, the relay's byte quota (4 MiB for his mailbox) takes only part of the
    /// file: Alice's list says it waits for room at the relay; restarted while Sam is still
    /// away (no session: nothing can go), that it waits for Sam; once Sam is back and drains
    /// the mailbox, the rest goes and the file is Delivered, whole, once.
    func testAFileSaysWhatItWaitsForAtTheRelayQuotaAndWithoutTheReceiver() throws {
        world.stopRelay(signal: SIGKILL)
        try world.startRelay(arguments: ["--quota-bytes", String(4 << 20)])
        world.steadyTraffic = "off"  // the quota counts the bytes held: no dummies in them
        try chattingPair()
        world.stopSync("sam")
        let (path, data) = try randomFile("quota.bin", bytes: 6 * 1024 * 1024)
        let id = try sendFile("alice", to: "Sam", path)

        var object: [String: Any] = [:]
        try world.eventually("Alice's list says the file waits for room at the relay", timeout: 60) {
            object = try self.attachment("alice", "Sam", id)
            return object["waiting"] as? String == "room"
        }
        let taken = try XCTUnwrap(object["received"] as? Int)
        XCTAssertGreaterThan(taken, 0)
        XCTAssertLessThan(taken, data.count)
        XCTAssertTrue(world.syncLog("alice").contains("the relay refused part of a file"), world.diagnostics())
        try world.eventually("the file's line says so too", timeout: 10) {
            try self.listLine("alice", "Sam", id).contains("% taken by the relay, waiting for room at the relay)  ")
        }
        XCTAssertEqual(try world.status("alice", "Sam", id), "Sending")

        // A new run has no session until Sam is back: nothing of the file can go before.
        world.stopSync("alice")
        try world.startSync("alice")
        try world.eventually("Alice's list says the file waits for Sam", timeout: 30) {
            try self.attachment("alice", "Sam", id)["waiting"] as? String == "contact"
        }
        let line = try listLine("alice", "Sam", id)
        XCTAssertTrue(line.contains("% taken by the relay, waiting for Sam to come back)  "), line)

        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 90)
        XCTAssertNil(try attachment("alice", "Sam", id)["waiting"])
        let got = try XCTUnwrap(try attachment("sam", "Alice", id)["path"] as? String)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: got)), data)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.id == id }.count, 1, "shown once")
        let chunks = (data.count + Self.chunkBytes - 1) / Self.chunkBytes
        XCTAssertTrue(world.syncLog("sam").contains("a file from Alice arrived whole (\(data.count) bytes, \(chunks) chunks, \(chunks) written in this run)"),
                      world.diagnostics())
        world.stopSync("alice")
        world.stopSync("sam")
    }
}
