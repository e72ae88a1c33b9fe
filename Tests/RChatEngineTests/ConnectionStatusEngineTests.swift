import Foundation
import XCTest
import RChatCore
@testable import RChatEngine
#if canImport(Glibc)
import Glibc
#endif

/// What the engine tells the view about its relay is true: a relay frozen by SIGSTOP that
/// leaves an acknowledgement overdue is reported stalled (not online) until it answers
/// again; `/reconnect` makes an offline relay's next attempt now, whatever its backoff.
final class ConnectionStatusEngineTests: RelayEngineTestCase {
    private func connectionEvents(_ events: Locked<[ChatEvent]>) -> [ConnectionState] {
        events.withLock { $0.compactMap { if case .connectionChanged(let c) = $0 { c } else { nil } } }
    }

    func testAFrozenRelayIsReportedStalledUntilItAnswersAgain() throws {
        let address = try startRelay()
        let alice = try account("Alice", relay: address)
        let sam = try account("Sam", relay: address)
        _ = try alice.addContact(try sam.identity().contactCode(device: sam.device), name: "Sam")
        _ = try sam.addContact(try alice.identity().contactCode(device: alice.device), name: "Alice")
        try alice.setSetting("ack-timeout-s", "1")
        let events = Locked<[ChatEvent]>([])
        let aliceEngine = try startEngine(alice, logged: true) { engine in
            engine.relayStallSeconds = 60   // the acknowledgement timeout speaks first
            engine.onEvent = { event in events.withLock { $0.append(event) } }
        }
        _ = try startEngine(sam, logged: false)
        let warmUp = try alice.send(to: "Sam", content: .text("warm-up"))
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", [warmUp], .delivered)
        XCTAssertEqual(connectionEvents(events).last, .online)
        XCTAssertFalse(connectionEvents(events).contains(.stalled), "a relay that answers is never stalled")

        let pid = try XCTUnwrap(relay?.processIdentifier)
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        let frozen = try alice.send(to: "Sam", content: .text("into the frozen relay"))
        aliceEngine.engine.wake()
        try untilDeadline("Alice's engine reports the relay stalled", seconds: 15) {
            connectionEvents(events).last == .stalled
        }
        XCTAssertTrue(logLines.all.contains { $0.hasPrefix("Alice: relay") && $0.contains("left an acknowledgement overdue") })
        let status = try XCTUnwrap(try messages(alice, "Sam").first { $0.id == frozen }).status
        XCTAssertTrue([.sending, .notConfirmed].contains(status), "not Sent without the relay's word: \(String(describing: status))")

        kill(pid, SIGCONT)
        try untilDeadline("the relay answers and it is online again", seconds: 20) {
            connectionEvents(events).last == .online
        }
        try waitForStatus(alice, "Sam", [frozen], .delivered)
        XCTAssertEqual(connectionEvents(events).last, .online)
    }

    func testReconnectTriesAnOfflineRelayNowWhateverItsBackoff() throws {
        let address = try startRelay()
        let alice = try account("Alice", relay: address)
        let events = Locked<[ChatEvent]>([])
        let aliceEngine = try startEngine(alice, logged: true) { engine in
            engine.onEvent = { event in events.withLock { $0.append(event) } }
        }
        try untilDeadline("Alice is online", seconds: 15) { connectionEvents(events).last == .online }
        let relayProcess = try XCTUnwrap(relay)
        relayProcess.terminate()
        relayProcess.waitUntilExit()
        // Each failed attempt doubles the wait: 1, 2, 4 s …
        try untilDeadline("the backoff reaches 4 s", seconds: 20) {
            if case .offline(let retryIn) = connectionEvents(events).last { return retryIn >= 4 } else { return false }
        }
        let before = connectionEvents(events).count
        let asked = Date()
        aliceEngine.engine.reconnect()
        try untilDeadline("an attempt is made at once and its backoff starts again", seconds: 3) {
            connectionEvents(events).dropFirst(before).contains(.offline(retryIn: 1))
        }
        let waited = Date().timeIntervalSince(asked)
        XCTAssertLessThan(waited, 3, "tried now, not in 4 s or more")
        XCTAssertEqual(connectionEvents(events).dropFirst(before).first, .connecting, "the view is told it is connecting")
        print("reconnect attempt failed back after \(String(format: "%.3f", waited)) s")
    }
}
