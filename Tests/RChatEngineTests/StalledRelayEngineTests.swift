import Foundation
import XCTest
import RChatCore
import RChatRelayClient
@testable import RChatEngine
#if canImport(Glibc)
import Glibc
#endif

/// The relay stops reading (SIGSTOP) while megabytes wait for it: the engine gives the
/// connection up after its stall timeout, makes it again when it can, and sends again what
/// the relay never acknowledged — nothing is Sent before the relay said so.
final class StalledRelayEngineTests: RelayEngineTestCase {
    func testAStalledConnectionIsGivenUpAndWhatItHeldGoesAgainOnTheNextOne() throws {
        let address = try startRelay()
        let alice = try account("Alice", relay: address)
        let sam = try account("Sam", relay: address)
        _ = try alice.addContact(try sam.identity().contactCode(device: sam.device), name: "Sam")
        _ = try sam.addContact(try alice.identity().contactCode(device: alice.device), name: "Alice")
        let aliceEngine = try startEngine(alice, logged: true) { $0.relayStallSeconds = 1 }
        _ = try startEngine(sam, logged: true)
        let warmUp = try alice.send(to: "Sam", content: .text("warm-up"))
        aliceEngine.engine.wake()
        try waitForStatus(alice, "Sam", [warmUp], .delivered)

        let pid = try XCTUnwrap(relay?.processIdentifier)
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        // 160 messages of 60,000 bytes (9.6 MB): more than the kernel's buffers hold.
        let text = String(repeating: "0123456789", count: 6_000)
        var ids: [MessageID] = []
        for i in 0..<160 { ids.append(try alice.send(to: "Sam", content: .text(String("\(i) \(text)".prefix(60_000))))) }
        aliceEngine.engine.wake()
        try untilDeadline("Alice's engine gives the stalled connection up", seconds: 20) {
            logLines.all.contains { $0.hasPrefix("Alice: relay") && $0.contains("the relay read nothing for 1 s") }
        }
        let statuses = Set(try messages(alice, "Sam").filter { ids.contains($0.id) }.map(\.status))
        XCTAssertTrue(statuses.isSubset(of: [.sending, .notConfirmed]), "nothing is Sent without the relay's word: \(statuses)")

        kill(pid, SIGCONT)
        try untilDeadline("all 160 are Delivered after the relay reads again", seconds: 90) {
            try messages(alice, "Sam").filter { ids.contains($0.id) }.allSatisfy { $0.status == .delivered }
        }
        // Each once (frames of the given-up connection may still reach the relay when it
        // reads again, and their copies on the new session are recognised).
        let received = try messages(sam, "Alice").map(\.id)
        XCTAssertEqual(received.count, ids.count + 1, "each once")
        XCTAssertEqual(Set(received), Set([warmUp] + ids))
    }
}
