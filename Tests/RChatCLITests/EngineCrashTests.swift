import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Crashes: SIGKILL of the sender, the receiver and the relay. Afterwards no message
/// is lost, none is shown twice, and no Delivered is claimed without a stored copy.
final class EngineCrashTests: EngineTestCase {
    /// Every Delivered or Read on `sender`'s side names a message `receiver` has stored.
    func assertDeliveredOnlyWhatIsStored(_ sender: String, to name: String, _ receiver: String, from senderName: String,
                                         file: StaticString = #filePath, line: UInt = #line) throws {
        let claimed = try world.list(sender, name).filter { $0.direction == "out" && ["Delivered", "Read"].contains($0.status ?? "") }
        let stored = Set(try world.list(receiver, senderName).filter { $0.direction == "in" }.map(\.id))
        for m in claimed {
            XCTAssertTrue(stored.contains(m.id), "\(m.id) (\(m.text)) is \(m.status!) but \(receiver) has not stored it", file: file, line: line)
        }
    }

    /// Each id at most once, and exactly `expected` (in any order).
    func assertEachOnce(_ person: String, _ name: String, expected: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let ids = try world.list(person, name).filter { $0.direction == "in" }.map(\.id)
        XCTAssertEqual(ids.count, Set(ids).count, "a message shown twice: \(ids)", file: file, line: line)
        XCTAssertEqual(Set(ids), Set(expected), "missing: \(Set(expected).subtracting(ids)), unexpected: \(Set(ids).subtracting(expected))",
                       file: file, line: line)
    }

    func testSenderKilledAfterCommitAndBeforeTheRelayAckLosesAndDuplicatesNothing() throws {
        let warmUp = try world.pairWithSession()
        world.stopSync("alice")

        // Committed locally (Sending) while Alice's engine is not running.
        var ids: [String] = []
        for n in 1...20 { ids.append(try world.send("alice", to: "Sam", "batch \(n)")) }
        for m in try world.list("alice", "Sam") where ids.contains(m.id) { XCTAssertEqual(m.status, "Sending") }

        // Killed right after it starts: before it could have had any acknowledgement.
        try world.startSync("alice")
        world.crashSync("alice")
        // Killed again as soon as the first of them has reached Sam: most likely with frames
        // on the wire whose acknowledgements it never handled.
        try world.startSync("alice")
        try world.eventually("Sam receives the first of the batch", timeout: 15) {
            try self.world.list("sam", "Alice").contains { ids.contains($0.id) }
        }
        world.crashSync("alice")
        try assertDeliveredOnlyWhatIsStored("alice", to: "Sam", "sam", from: "Alice")

        // The next run sends what was not acknowledged, unchanged; Sam keeps each id once.
        try world.startSync("alice")
        try world.eventually("all of the batch is Delivered", timeout: 20) {
            try self.world.list("alice", "Sam").filter { ids.contains($0.id) }.allSatisfy { $0.status == "Delivered" }
        }
        try assertEachOnce("sam", "Alice", expected: [warmUp] + ids)
        let texts = Dictionary(uniqueKeysWithValues: try world.list("sam", "Alice").map { ($0.id, $0.text) })
        for (n, id) in ids.enumerated() { XCTAssertEqual(texts[id], "batch \(n + 1)") }
        XCTAssertEqual(try world.list("alice", "Sam").count, 21)
        world.stopSync("alice")
        world.stopSync("sam")
    }

    func testReceiverKilledWhileMessagesArriveEndsWithEachMessageOnce() throws {
        let warmUp = try world.pairWithSession()

        var ids: [String] = []
        var killed = false
        for n in 1...50 {
            ids.append(try world.send("alice", to: "Sam", "message \(n)"))
            // Mid-way, as soon as Sam has stored ten of them: SIGKILL, whatever it is doing.
            if !killed && n >= 10 && n % 2 == 0, try world.list("sam", "Alice").filter({ ids.contains($0.id) }).count >= 10 {
                world.crashSync("sam")
                killed = true
                try assertDeliveredOnlyWhatIsStored("alice", to: "Sam", "sam", from: "Alice")
            }
        }
        if !killed {
            world.crashSync("sam")
            XCTFail("Sam had not stored ten messages by the time fifty were sent")
        }
        try assertDeliveredOnlyWhatIsStored("alice", to: "Sam", "sam", from: "Alice")

        try world.startSync("sam")
        try world.eventually("all fifty are Delivered", timeout: 25) {
            let listed = try self.world.list("alice", "Sam").filter { ids.contains($0.id) }
            try self.assertDeliveredOnlyWhatIsStored("alice", to: "Sam", "sam", from: "Alice")
            return listed.count == 50 && listed.allSatisfy { $0.status == "Delivered" }
        }
        try assertEachOnce("sam", "Alice", expected: [warmUp] + ids)
        try assertDeliveredOnlyWhatIsStored("alice", to: "Sam", "sam", from: "Alice")
        world.stopSync("alice")
        world.stopSync("sam")
        try assertEachOnce("sam", "Alice", expected: [warmUp] + ids)
    }

    /// Frames the relay forwarded to a live Sam who never stored them (frozen, then killed):
    /// Sent on Alice's side, and handed over again when Sam comes back — each stored once.
    func testReceiverKilledBeforeStoringWhatWasForwardedGetsItAllAgain() throws {
        let warmUp = try world.pairWithSession()

        world.freezeSync("sam")
        var ids: [String] = []
        for n in 1...30 { ids.append(try world.send("alice", to: "Sam", "forwarded \(n)")) }
        try world.eventually("all thirty are Sent", timeout: 15) {
            try self.world.list("alice", "Sam").filter { ids.contains($0.id) }.allSatisfy { $0.status == "Sent" }
        }
        world.crashSync("sam")
        XCTAssertEqual(try world.list("sam", "Alice").map(\.id), [warmUp], "nothing stored while frozen")
        try assertDeliveredOnlyWhatIsStored("alice", to: "Sam", "sam", from: "Alice")

        try world.startSync("sam")
        try world.eventually("all thirty are Delivered", timeout: 20) {
            let listed = try self.world.list("alice", "Sam").filter { ids.contains($0.id) }
            try self.assertDeliveredOnlyWhatIsStored("alice", to: "Sam", "sam", from: "Alice")
            return listed.count == 30 && listed.allSatisfy { $0.status == "Delivered" }
        }
        try assertEachOnce("sam", "Alice", expected: [warmUp] + ids)
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// A session with one message Delivered, then a relay that stops answering (SIGSTOP):
    /// `text` becomes Not confirmed after the one-second acknowledgement timeout.
    func notConfirmedBehindAFrozenRelay(_ text: String) throws -> (warmUp: String, id: String) {
        try world.makePair()
        try expectSuccessfulSetting("alice", "ack-timeout-s", "1")
        try world.startSync("sam")
        try world.startSync("alice")
        let warmUp = try world.send("alice", to: "Sam", "warm-up")
        try world.waitForStatus("alice", "Sam", warmUp, "Delivered")
        world.freezeRelay()
        let id = try world.send("alice", to: "Sam", text)
        try world.waitForStatus("alice", "Sam", id, "Not confirmed", timeout: 10)
        return (warmUp, id)
    }

    /// No acknowledgement in time: Not confirmed; the late acknowledgement and the receipt
    /// still count.
    func testRelayThatDoesNotAnswerMakesNotConfirmedAndALateAckStillCounts() throws {
        let (warmUp, id) = try notConfirmedBehindAFrozenRelay("are you there, relay?")
        XCTAssertFalse(try world.list("sam", "Alice").contains { $0.id == id })
        world.thawRelay()
        try world.waitForStatus("alice", "Sam", id, "Delivered")
        XCTAssertEqual(try world.status("alice", "Sam", warmUp), "Delivered")
        try assertEachOnce("sam", "Alice", expected: [warmUp, id])
        let seen = world.timelines["alice"]?[id] ?? []
        XCTAssertEqual(seen.first, "Sending", "timeline: \(seen)")
        XCTAssertTrue(seen.contains("Not confirmed"), "timeline: \(seen)")
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Sent on a link, never acknowledged, and the relay dies with it: the message goes
    /// again, unchanged, on the next session — and is shown once.
    func testUnacknowledgedMessageIsSentAgainOnTheNextSessionAfterARelayCrash() throws {
        let (warmUp, id) = try notConfirmedBehindAFrozenRelay("lost with the relay?")
        world.stopRelay(signal: SIGKILL)
        try world.startRelay(samePort: true)
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 20)
        try assertEachOnce("sam", "Alice", expected: [warmUp, id])
        XCTAssertEqual(try world.list("sam", "Alice").first { $0.id == id }?.text, "lost with the relay?")
        world.stopSync("alice")
        world.stopSync("sam")
    }

    func expectSuccessfulSetting(_ person: String, _ key: String, _ value: String) throws {
        try world.expectSuccess(world.box.rchat(person, ["settings", key, value]))
    }

    func testRelayKilledAndRestartedEnginesReconnectAndNothingIsLowered() throws {
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        let before = try world.send("alice", to: "Sam", "before the crash")
        try world.waitForStatus("alice", "Sam", before, "Delivered")
        let answer = try world.send("sam", to: "Alice", "me too")
        try world.waitForStatus("sam", "Alice", answer, "Delivered")

        world.stopRelay(signal: SIGKILL)
        try world.eventually("both engines notice the relay is gone", timeout: 10) {
            self.world.syncLog("alice").contains("closed") && self.world.syncLog("sam").contains("closed")
        }
        // Written while there is no relay: it waits.
        let during = try world.send("alice", to: "Sam", "while the relay is down")
        for _ in 0..<3 { XCTAssertEqual(try world.status("alice", "Sam", during), "Sending") }
        XCTAssertEqual(try world.status("alice", "Sam", before), "Delivered")

        try world.startRelay(samePort: true)
        try world.waitForStatus("alice", "Sam", during, "Delivered", timeout: 20)
        let after = try world.send("alice", to: "Sam", "after the restart")
        try world.waitForStatus("alice", "Sam", after, "Delivered")
        let reply = try world.send("sam", to: "Alice", "all good")
        try world.waitForStatus("sam", "Alice", reply, "Delivered")

        XCTAssertEqual(try world.status("alice", "Sam", before), "Delivered")
        XCTAssertEqual(try world.status("sam", "Alice", answer), "Delivered")
        try assertEachOnce("sam", "Alice", expected: [before, during, after])
        try assertEachOnce("alice", "Sam", expected: [answer, reply])
        world.assertStatusesNeverLowered()
        world.stopSync("alice")
        world.stopSync("sam")
    }
}
