import Foundation
import RChatWire
import XCTest

/// The relay's byte quota per mailbox (`--quota-bytes`), seen from real engines: what does
/// not fit is refused with its reason, stays Sending (never Sent, never Failed to send), is
/// tried again, and is Delivered once the recipient has taken what was held.
final class EngineByteQuotaTests: EngineTestCase {
    func testByteQuotaRefusalKeepsSendingAndRetries() throws {
        world.stopRelay(signal: SIGKILL)
        try world.startRelay(arguments: ["--quota-bytes", String(1 << 20)])
        world.steadyTraffic = "off"  // it counts the bytes held: no dummies in them
        let warmUp = try world.pairWithSession()
        world.stopSync("sam")

        // 20 messages of 60 KiB for a mailbox that holds 1 MiB: 16 or 17 fit, by the
        // envelope's overhead; the rest are refused for the byte quota (not the item quota).
        let text = String(repeating: "x", count: 60 * 1024 - 2)
        var ids: [String] = []
        for n in 1...20 { ids.append(try world.send("alice", to: "Sam", String(format: "%02d", n) + text)) }
        let reason = RefusalReason.byteQuotaExceeded.description
        var sent = 0
        try world.eventually("what fits is Sent and the rest refused for the byte quota", timeout: 20) {
            let statuses = try self.world.list("alice", "Sam").filter { ids.contains($0.id) }.compactMap(\.status)
            sent = statuses.filter { $0 == "Sent" }.count
            return (16...17).contains(sent) && statuses.filter { $0 == "Sending" }.count == 20 - sent
                && self.world.syncLog("alice").contains(reason)
        }
        XCTAssertFalse(world.syncLog("alice").contains(RefusalReason.quotaExceeded.description), "the item quota is not what refused")

        try world.startSync("sam")
        try world.eventually("all twenty are Delivered", timeout: 60) {
            try self.world.list("alice", "Sam").filter { ids.contains($0.id) }.allSatisfy { $0.status == "Delivered" }
        }
        let received = try world.list("sam", "Alice").filter { $0.direction == "in" }.map(\.id)
        XCTAssertEqual(received.count, 21, "each once")
        XCTAssertEqual(Set(received), Set([warmUp] + ids))
        print("figure: 20 × 60 KiB to an offline mailbox with --quota-bytes 1 MiB: \(sent) held, \(20 - sent) refused and kept Sending, all Delivered later")
        world.stopSync("alice")
        world.stopSync("sam")
    }
}
