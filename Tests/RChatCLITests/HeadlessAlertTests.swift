import Foundation
import XCTest

/// Alerts from a running engine without a view: `rchat sync`, and the linger after the
/// view quits, follow the check's policy (grouped, a summary after five, never twice).
final class HeadlessAlertTests: EngineTestCase {
    /// The alert lines a sync wrote to standard error (desktop alerts are off here).
    func alertLines(_ person: String) -> [String] {
        world.syncLog(person).split(separator: "\n").map(String.init).filter {
            $0.hasSuffix(": New message") || $0.hasSuffix(" new messages")
        }
    }

    func testSyncAlertsOnceEachAndSummarisesMoreThanFiveArrivingTogether() throws {
        try world.pairWithSession()   // its warm-up message is the first alert
        try world.eventually("Sam's sync alerted the warm-up", timeout: 10) { self.alertLines("sam") == ["Alice: New message"] }
        let one = try world.send("alice", to: "Sam", "one")
        try world.waitForStatus("alice", "Sam", one, "Delivered")
        try world.eventually("and the next one", timeout: 10) { self.alertLines("sam") == ["Alice: New message", "Alice: New message"] }

        // Seven held while Sam is away arrive together when his sync comes back: one summary.
        world.stopSync("sam")
        var held: [String] = []
        for n in 1...7 { held.append(try world.send("alice", to: "Sam", "held \(n)")) }
        for id in held { try world.waitForStatus("alice", "Sam", id, "Sent") }
        try world.startSync("sam")
        for id in held { try world.waitForStatus("alice", "Sam", id, "Delivered") }
        try world.eventually("one summary for the seven", timeout: 10) { self.alertLines("sam") == ["rChat: 7 new messages"] }

        // Nothing is alerted twice: a new sync over the same store says nothing of them.
        world.stopSync("sam")
        try world.startSync("sam")
        let after = try world.send("alice", to: "Sam", "after the restart")
        try world.waitForStatus("alice", "Sam", after, "Delivered")
        try world.eventually("only the new one alerted", timeout: 10) { self.alertLines("sam") == ["Alice: New message"] }
        world.stopSync("sam")
        XCTAssertEqual(alertLines("sam"), ["Alice: New message"])
    }
}
