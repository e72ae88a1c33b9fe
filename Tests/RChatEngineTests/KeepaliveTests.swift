import Foundation
import XCTest
@testable import RChatEngine

/// An engine that waits for nothing at its relay (no contacts: only its invite registered)
/// pings, so the relay's idle timeout never closes it; one that does not ping is closed.
final class KeepaliveTests: RelayEngineTestCase {
    func testAnEngineThatPingsOutlivesTheIdleTimeout() throws {
        let address = try startRelay(["--idle-timeout", "1"])
        let alice = try account("Alice", relay: address)
        let bob = try account("Bob", relay: address)
        _ = try startEngine(alice, logged: true) { $0.keepaliveSeconds = 0.25 }
        _ = try startEngine(bob, logged: true) { $0.keepaliveSeconds = 3_600 }
        // Bob's engine, which does not ping in this time, is closed for idling, reconnects
        // (a second later) and is closed again: more than twice the idle timeout in all.
        func closes(_ name: String) -> Int {
            logLines.all.filter { $0.hasPrefix("\(name): relay ") && $0.contains(" closed: ") }.count
        }
        try untilDeadline("Bob's engine closed twice for idling", seconds: 10) { closes("Bob") >= 2 }
        XCTAssertEqual(closes("Alice"), 0, logLines.all.joined(separator: "\n"))
        let relayLog = try String(contentsOf: directory.appendingPathComponent("relay.err"), encoding: .utf8)
        XCTAssertGreaterThanOrEqual(relayLog.components(separatedBy: "idle for 1.0 s").count - 1, 2, relayLog)
        XCTAssertTrue(logLines.all.contains { $0.hasPrefix("Bob: relay ") && $0.contains("too slow") }, "closed with the timeout error")
    }
}
