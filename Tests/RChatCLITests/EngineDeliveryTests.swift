import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Two accounts on one machine chat through a real `rchat-relay`, driven by real
/// `rchat sync` processes, and `rchat list NAME --json` shows statuses that are true.
final class EngineDeliveryTests: EngineTestCase {
    /// Both sides online and a session up: a first message is Delivered.
    func establishSession() throws -> String {
        let id = try world.send("alice", to: "Sam", "warm-up")
        try world.waitForStatus("alice", "Sam", id, "Delivered")
        return id
    }

    /// Blocking gives the conversation's link up and tells the relay, so after unblocking
    /// (both engines running all along) the two link again and messages flow both ways;
    /// without the relay being told, Sam's engine kept the old link and ignored the new one.
    func testMessagesFlowAgainAfterBlockAndUnblockWhileBothRun() throws {
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        _ = try establishSession()
        XCTAssertEqual(try world.box.rchat("alice", ["block", "Sam"]).status, 0)
        XCTAssertEqual(try world.box.rchat("alice", ["unblock", "Sam"]).status, 0)
        let after = try world.send("alice", to: "Sam", "after unblocking")
        try world.waitForStatus("alice", "Sam", after, "Delivered", timeout: 20)
        let back = try world.send("sam", to: "Alice", "and back")
        try world.waitForStatus("sam", "Alice", back, "Delivered", timeout: 20)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.id == after }.count, 1)
    }

    func testSendingSentDeliveredReadWithBothOnline() throws {
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        let id = try world.send("alice", to: "Sam", "hello sam")
        XCTAssertNotNil(id.range(of: "^[0-9a-f]{32}$", options: .regularExpression), id)

        try world.waitForStatus("alice", "Sam", id, "Delivered")
        let received = try world.list("sam", "Alice")
        XCTAssertEqual(received, [Listed(id: id, direction: "in", text: "hello sam", status: nil, resent: false)])
        XCTAssertEqual(try world.contacts("sam"), [ListedContact(name: "Alice", state: "ok", unread: 1)])

        let read = try world.box.rchat("sam", ["read", "Alice"])
        XCTAssertEqual(read.status, 0, read.stderr)
        XCTAssertEqual(read.lines, ["marked 1 message read"])
        XCTAssertEqual(try world.contacts("sam"), [ListedContact(name: "Alice", state: "ok", unread: 0)])
        try world.waitForStatus("alice", "Sam", id, "Read")
        // Read stays Read, poll after poll.
        for _ in 0..<5 { XCTAssertEqual(try world.status("alice", "Sam", id), "Read") }

        let seen = world.timelines["alice"]?[id] ?? []
        XCTAssertTrue(["Sending", "Sent", "Delivered"].contains(seen.first ?? ""), "first seen: \(seen)")
        XCTAssertEqual(Array(seen.suffix(2)), ["Delivered", "Read"], "timeline: \(seen)")
        XCTAssertFalse(seen.contains("Not confirmed"), "timeline: \(seen)")
        world.assertStatusesNeverLowered()
        // Sam's copy is there once, and the reply goes the other way just as well.
        let reply = try world.send("sam", to: "Alice", "hi alice")
        try world.waitForStatus("sam", "Alice", reply, "Delivered")
        XCTAssertEqual(try world.list("alice", "Sam").map(\.id), [id, reply])
        XCTAssertEqual(try world.list("sam", "Alice").map(\.id), [id, reply])
        world.stopSync("alice")
        world.stopSync("sam")
    }

    func testPeerOfflineMessageIsHeldThenDeliveredWhenItReturns() throws {
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        _ = try establishSession()
        world.stopSync("sam")

        let id = try world.send("alice", to: "Sam", "while you were away")
        try world.waitForStatus("alice", "Sam", id, "Sent")
        // Held by the relay: Sam has not got it, and nobody claims he has.
        XCTAssertFalse(try world.list("sam", "Alice").contains { $0.id == id })
        for _ in 0..<5 { XCTAssertEqual(try world.status("alice", "Sam", id), "Sent") }

        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", id, "Delivered")
        let received = try world.list("sam", "Alice").filter { $0.id == id }
        XCTAssertEqual(received, [Listed(id: id, direction: "in", text: "while you were away", status: nil, resent: false)])
        world.stopSync("alice")
        world.stopSync("sam")
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.id == id }.count, 1, "shown once, also after a restart")
    }

    /// Either side going away and coming back, again and again: each time a fresh session,
    /// and what was written meanwhile (messages and Read receipts) arrives.
    func testSessionsComeBackAfterEveryRestartOfEitherSide() throws {
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        var toSam = [try establishSession()]
        var toAlice: [String] = []
        for round in 1...3 {
            // Sam away: Alice's message is held; back: Delivered.
            world.stopSync("sam")
            let id = try world.send("alice", to: "Sam", "round \(round) while Sam is away")
            toSam.append(id)
            try world.waitForStatus("alice", "Sam", id, "Sent")
            try world.startSync("sam")
            try world.waitForStatus("alice", "Sam", id, "Delivered")

            // Alice away: Sam reads and writes meanwhile; back: Read and Delivered.
            world.stopSync("alice")
            XCTAssertEqual(try world.box.rchat("sam", ["read", "Alice"]).status, 0)
            let reply = try world.send("sam", to: "Alice", "round \(round) while Alice is away")
            toAlice.append(reply)
            try world.waitForStatus("sam", "Alice", reply, "Sent")
            if round == 2 {
                // The owed Read receipts are in Sam's store: a crash does not lose them.
                world.crashSync("sam")
                try world.startSync("sam")
            }
            try world.startSync("alice")
            try world.waitForStatus("alice", "Sam", id, "Read")
            try world.waitForStatus("sam", "Alice", reply, "Delivered")
        }
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.id), toSam)
        XCTAssertEqual(try world.list("alice", "Sam").filter { $0.direction == "in" }.map(\.id), toAlice)
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Alice's code names one relay, Sam's another: a request goes to Sam's relay, the
    /// conversation lives on one of the two, and both ways work.
    func testAccountsOnDifferentRelays() throws {
        let second = try world.startSecondRelay()
        try world.makeAccount("alice")
        try world.makeAccount("sam", relay: second)
        try world.startSync("sam")
        try world.eventually("Sam's engine is connected", timeout: 10) { self.world.syncLog("sam").contains("connected to relay") }
        try world.add("alice", "sam")
        try world.startSync("alice")
        let request = try world.send("alice", to: "Sam", "a request across relays")
        try world.eventually("Sam has the request", timeout: 15) {
            try self.world.contacts("sam") == [ListedContact(name: "Alice", state: "request", unread: 1)]
        }
        try world.add("sam", "alice")
        try world.waitForStatus("alice", "Sam", request, "Delivered")
        let reply = try world.send("sam", to: "Alice", "and back")
        try world.waitForStatus("sam", "Alice", reply, "Delivered")
        let next = try world.send("alice", to: "Sam", "and again")
        try world.waitForStatus("alice", "Sam", next, "Delivered")
        XCTAssertEqual(try world.list("sam", "Alice").map(\.id), [request, reply, next])
        XCTAssertEqual(try world.list("alice", "Sam").map(\.id), [request, reply, next])
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Both write at once, many messages each way: every one arrives once, every one is Delivered.
    func testBothWritingAtOnce() throws {
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        _ = try establishSession()
        let group = DispatchGroup()
        nonisolated(unsafe) var fromAlice: [String] = [], fromSam: [String] = []
        nonisolated(unsafe) var failures: [String] = []
        let lock = NSLock()
        nonisolated(unsafe) let box = world.box
        for (person, name) in [("alice", "Sam"), ("sam", "Alice")] {
            DispatchQueue.global().async(group: group) {
                for n in 1...15 {
                    do {
                        let run = try box.rchat(person, ["send", name, "\(person) \(n)"])
                        lock.withLock {
                            if run.status != 0 { failures.append(run.stderr) }
                            if person == "alice" { fromAlice.append(run.stdout.trimmingCharacters(in: .newlines)) }
                            else { fromSam.append(run.stdout.trimmingCharacters(in: .newlines)) }
                        }
                    } catch {
                        lock.withLock { failures.append("\(error)") }
                    }
                }
            }
        }
        group.wait()
        XCTAssertEqual(failures, [])
        try world.eventually("all thirty are Delivered", timeout: 20) {
            let a = try self.world.list("alice", "Sam"), s = try self.world.list("sam", "Alice")
            return fromAlice.allSatisfy { id in a.first { $0.id == id }?.status == "Delivered" }
                && fromSam.allSatisfy { id in s.first { $0.id == id }?.status == "Delivered" }
        }
        let atSam = try world.list("sam", "Alice"), atAlice = try world.list("alice", "Sam")
        XCTAssertEqual(atSam.count, 31)
        XCTAssertEqual(atAlice.count, 31)
        XCTAssertEqual(Set(atSam.map(\.id)), Set(atAlice.map(\.id)))
        XCTAssertEqual(Set(atSam.filter { $0.direction == "in" }.map(\.id)), Set(fromAlice).union([atSam[0].id]))
        XCTAssertEqual(Set(atAlice.filter { $0.direction == "in" }.map(\.id)), Set(fromSam))
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// Over the relay's quota for an offline mailbox: refused, kept as Sending (never Sent,
    /// never Failed), tried again with backoff, and delivered once there is room.
    func testQuotaRefusalKeepsSendingAndRetries() throws {
        world.stopRelay(signal: SIGKILL)
        try world.startRelay(arguments: ["--quota", "3"])
        world.steadyTraffic = "off"  // a quota of a few frames: no dummies or cover in it
        let warmUp = try world.pairWithSession()
        world.stopSync("sam")

        var ids: [String] = []
        for n in 1...5 { ids.append(try world.send("alice", to: "Sam", "over quota? \(n)")) }
        try world.eventually("three are held and the rest refused", timeout: 10) {
            let statuses = try self.world.list("alice", "Sam").filter { ids.contains($0.id) }.map(\.status)
            return statuses.filter { $0 == "Sent" }.count == 3 && self.world.syncLog("alice").contains("refused")
        }
        let statuses = try world.list("alice", "Sam").filter { ids.contains($0.id) }.compactMap(\.status)
        XCTAssertEqual(statuses.sorted(), ["Sending", "Sending", "Sent", "Sent", "Sent"])

        try world.startSync("sam")
        try world.eventually("all five are Delivered", timeout: 20) {
            try self.world.list("alice", "Sam").filter { ids.contains($0.id) }.allSatisfy { $0.status == "Delivered" }
        }
        let received = try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.id)
        XCTAssertEqual(received.count, 6)
        XCTAssertEqual(Set(received), Set([warmUp] + ids))
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// A relay whose quota is one frame per mailbox refuses handshakes, requests, messages
    /// and receipts in turn: each is tried again, and every message gets through, once.
    func testQuotaOfOneStillGetsEverythingThrough() throws {
        world.stopRelay(signal: SIGKILL)
        try world.startRelay(arguments: ["--quota", "1"])
        world.steadyTraffic = "off"  // a quota of a few frames: no dummies or cover in it
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        var ids: [String] = []
        for n in 1...4 {
            ids.append(try world.send("alice", to: "Sam", "tight \(n)"))
            ids.append(try world.send("sam", to: "Alice", "squeeze \(n)"))
        }
        try world.eventually("all eight are Delivered", timeout: 25) {
            let a = try self.world.list("alice", "Sam"), s = try self.world.list("sam", "Alice")
            let mine = a.filter { $0.direction == "out" } + s.filter { $0.direction == "out" }
            return mine.count == 8 && mine.allSatisfy { $0.status == "Delivered" }
        }
        XCTAssertTrue(world.isSyncRunning("alice") && world.isSyncRunning("sam"), "no engine gave up on a refusal")
        for (person, name) in [("alice", "Sam"), ("sam", "Alice")] {
            let listed = try world.list(person, name).map(\.id)
            XCTAssertEqual(listed.count, 8)
            XCTAssertEqual(Set(listed), Set(ids))
        }
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// With `--persist`, what the relay holds survives its SIGKILL.
    func testHeldMessageSurvivesAPersistentRelayCrash() throws {
        world.stopRelay(signal: SIGKILL)
        let held = world.box.path("relay-held.sqlite")
        try world.startRelay(arguments: ["--persist", held])
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        _ = try establishSession()
        world.stopSync("sam")
        let id = try world.send("alice", to: "Sam", "kept through a relay crash")
        try world.waitForStatus("alice", "Sam", id, "Sent")

        world.stopRelay(signal: SIGKILL)
        try world.startRelay(samePort: true, arguments: ["--persist", held])
        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 20)
        XCTAssertEqual(try world.list("sam", "Alice").filter { $0.id == id }.count, 1)
        world.stopSync("alice")
        world.stopSync("sam")
    }

    func testBothRestartingWhileTheOtherIsOfflineItStaysSendingThenGoesByItself() throws {
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        let first = try establishSession()
        world.stopSync("alice")
        world.stopSync("sam")

        // Alice alone: written, but there is no session — it waits.
        try world.startSync("alice")
        try world.eventually("Alice's engine is connected", timeout: 10) { self.world.syncLog("alice").contains("connected to relay") }
        let id = try world.send("alice", to: "Sam", "whenever we are both here")
        for _ in 0..<5 { XCTAssertEqual(try world.status("alice", "Sam", id), "Sending") }
        world.stopSync("alice")

        // Sam alone: nothing from Alice reaches him, nothing changes on her side.
        try world.startSync("sam")
        try world.eventually("Sam's engine is connected", timeout: 10) { self.world.syncLog("sam").contains("connected to relay") }
        XCTAssertEqual(try world.list("sam", "Alice").map(\.id), [first])
        world.stopSync("sam")
        XCTAssertEqual(try world.status("alice", "Sam", id), "Sending")

        // Both online: it goes with no action.
        try world.startSync("alice")
        try world.startSync("sam")
        try world.waitForStatus("alice", "Sam", id, "Delivered")
        XCTAssertEqual(try world.list("sam", "Alice").map(\.id), [first, id])
        XCTAssertEqual(try world.status("alice", "Sam", first), "Delivered")
        world.stopSync("alice")
        world.stopSync("sam")
    }

    func testMessageRequestArrivesWhileOfflineAndIsDeliveredOnceAccepted() throws {
        try world.makeAccount("alice")
        try world.makeAccount("sam")
        try world.add("alice", "sam")
        // Sam has been online once since he made his account (so the relay knows his
        // invite), and is offline now.
        try world.startSync("sam")
        try world.eventually("Sam's engine is connected", timeout: 10) { self.world.syncLog("sam").contains("connected to relay") }
        world.stopSync("sam")
        try world.startSync("alice")
        let id = try world.send("alice", to: "Sam", "hi, it's Alice")
        try world.waitForStatus("alice", "Sam", id, "Sent")
        XCTAssertEqual(try world.contacts("sam"), [])

        try world.startSync("sam")
        try world.eventually("Sam has a message request from Alice", timeout: 15) {
            try self.world.contacts("sam") == [ListedContact(name: "Alice", state: "request", unread: 1)]
        }
        XCTAssertEqual(try world.list("sam", "Alice"), [Listed(id: id, direction: "in", text: "hi, it's Alice", status: nil, resent: false)])
        // No reply before the request is accepted.
        XCTAssertFailsCleanly(try world.box.rchat("sam", ["send", "Alice", "hello?"]), status: 2, mentions: "request")
        XCTAssertEqual(try world.list("sam", "Alice").count, 1)

        let accept = try world.box.rchat("sam", ["add", try world.code("alice")])
        XCTAssertEqual(accept.status, 0, accept.stderr)
        XCTAssertEqual(accept.lines.first, "accepted the message request from Alice")
        XCTAssertEqual(try world.contacts("sam").map(\.state), ["ok"])
        try world.waitForStatus("alice", "Sam", id, "Delivered")

        // Now a conversation like any other, both ways, each message once.
        let reply = try world.send("sam", to: "Alice", "hello Alice")
        try world.waitForStatus("sam", "Alice", reply, "Delivered")
        let next = try world.send("alice", to: "Sam", "glad you accepted")
        try world.waitForStatus("alice", "Sam", next, "Delivered")
        XCTAssertEqual(try world.list("sam", "Alice").map(\.id), [id, reply, next])
        XCTAssertEqual(try world.list("alice", "Sam").map(\.id), [id, reply, next])
        world.stopSync("alice")
        world.stopSync("sam")
    }

    /// `send` and `read` wake a running engine: no waiting for a polling period.
    func testSendAndReadWhileSyncRunsArePickedUpAtOnce() throws {
        try world.makePair()
        try world.startSync("sam")
        try world.startSync("alice")
        _ = try establishSession()

        var latencies: [Double] = []
        var last = ""
        for n in 1...5 {
            let started = Date()
            let id = try world.send("alice", to: "Sam", "quick \(n)")
            last = id
            try world.waitForStatus("alice", "Sam", id, "Sent", orHigher: true, timeout: 2)
            latencies.append(Date().timeIntervalSince(started))
        }
        // The engine also sweeps its outbox about once a second; a median well under that
        // shows the local wake-up at work.
        let median = latencies.sorted()[latencies.count / 2]
        print("send → Sent (seen by polling `rchat list`): \(latencies.map { String(format: "%.3f s", $0) })")
        XCTAssertLessThan(median, 0.6, "send → Sent latencies: \(latencies)")

        // Read receipts are only ever sent after a wake-up (or a delivery), at the end of the
        // steady pace's slot then (2 s ± 30 %): Read within 4 s.
        try world.eventually("Sam stored every message", timeout: 5) {
            try self.world.list("sam", "Alice").count == 6
        }
        XCTAssertEqual(try world.box.rchat("sam", ["read", "Alice"]).status, 0)
        try world.waitForStatus("alice", "Sam", last, "Read", timeout: 4)
        world.stopSync("alice")
        world.stopSync("sam")
    }

    func testLongestMessageGoesThroughAndOneByteMoreIsRefused() throws {
        try world.makePair()
        // 60 KiB of text in multi-byte characters: the longest a message may be.
        let longest = String(repeating: "é", count: 30 * 1024)
        XCTAssertEqual(longest.utf8.count, 60 * 1024)
        let id = try world.send("alice", to: "Sam", longest)
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["send", "Sam", longest + "x"]), status: 2, mentions: "too long")
        try world.startSync("sam")
        try world.startSync("alice")
        try world.waitForStatus("alice", "Sam", id, "Delivered")
        XCTAssertEqual(try world.list("sam", "Alice").map(\.text), [longest])
        XCTAssertEqual(try world.list("alice", "Sam").count, 1)
        // The first most likely went before any session, as a message request; this one
        // goes inside the session.
        let again = try world.send("alice", to: "Sam", longest)
        try world.waitForStatus("alice", "Sam", again, "Delivered")
        XCTAssertEqual(try world.list("sam", "Alice").map(\.id), [id, again])
        XCTAssertEqual(try world.list("sam", "Alice").map(\.text), [longest, longest])
        world.stopSync("alice")
        world.stopSync("sam")
    }
}
