import Foundation
import XCTest

/// `rchat check`, the background check, against a real relay.
final class CheckTests: EngineTestCase {
    /// Alice and Sam met once; Sam is away; Alice's messages wait at the relay.
    func heldForSam(_ texts: [String]) throws -> [String] {
        try world.pairWithSession()
        world.stopSync("sam")
        var ids: [String] = []
        for text in texts {
            let id = try world.send("alice", to: "Sam", text)
            try world.waitForStatus("alice", "Sam", id, "Sent")
            ids.append(id)
        }
        return ids
    }

    func check(_ person: String, _ extra: [String] = [], env: [String: String] = [:]) throws -> Run {
        let run = try world.box.rchat(person, ["check", "--print"] + extra, env: env)
        XCTAssertEqual(run.status, 0, run.stderr)
        return run
    }

    /// The "in:" counters the relay logged for the last connection that closed.
    func lastClosedConnectionFrames() throws -> [String] {
        let log = try String(contentsOfFile: world.box.path("relay-1.err"), encoding: .utf8)
        guard let line = log.split(separator: "\n").last(where: { $0.contains(" closed; in: ") }),
              let inPart = line.components(separatedBy: " closed; in: ").last?.components(separatedBy: "; out:").first
        else { return [] }
        return inPart.split(separator: " ").map { String($0.split(separator: "=")[0]) }
    }

    func testCheckCollectsStoresAndAlertsOnceSendingNothing() throws {
        let ids = try heldForSam(["one", "two", "three"])
        let first = try check("sam")
        XCTAssertEqual(first.lines, ["Alice\tNew message", "Alice\tNew message", "Alice\tNew message"])
        // Stored with the saved state, in order.
        XCTAssertEqual(try world.list("sam", "Alice").map(\.text), ["warm-up", "one", "two", "three"])
        // The relay saw nothing from the check but authentication and acknowledgements.
        try world.eventually("the check's connection closed", timeout: 10) { !(try lastClosedConnectionFrames()).isEmpty }
        XCTAssertEqual(Set(try lastClosedConnectionFrames()), ["hello", "auth", "acknowledge"])
        // No receipts went: Alice still shows Sent.
        for id in ids { XCTAssertEqual(try world.status("alice", "Sam", id), "Sent") }

        // A second check alerts nothing again.
        XCTAssertEqual(try check("sam").lines, [])

        // Delivered goes at the next sync.
        try world.startSync("sam")
        for id in ids { try world.waitForStatus("alice", "Sam", id, "Delivered") }
        XCTAssertEqual(try world.list("sam", "Alice").count, 4, "nothing stored twice")
    }

    func testSixMessagesMakeOneSummary() throws {
        _ = try heldForSam((1...6).map { "m\($0)" })
        XCTAssertEqual(try check("sam").lines, ["rChat\t6 new messages"])
    }

    func testShowInAlertsSetting() throws {
        _ = try heldForSam(["hello\nthere"])
        XCTAssertEqual(try world.box.rchat("sam", ["settings", "show-in-alerts", "message"]).status, 0)
        XCTAssertEqual(try check("sam").lines, ["Alice\thello there"])
    }

    func testMutedAndBlockedProduceNothing() throws {
        _ = try heldForSam(["quiet"])
        XCTAssertEqual(try world.box.rchat("sam", ["mute", "Alice"]).status, 0)
        XCTAssertEqual(try check("sam").lines, [])
        // It was stored all the same, just not alerted.
        XCTAssertEqual(try world.list("sam", "Alice").map(\.text), ["warm-up", "quiet"])
    }

    func testBlockedSenderIsNotStoredOrAlerted() throws {
        try world.pairWithSession()
        world.stopSync("sam")
        XCTAssertEqual(try world.box.rchat("sam", ["block", "Alice"]).status, 0)
        let id = try world.send("alice", to: "Sam", "you blocked me")
        try world.waitForStatus("alice", "Sam", id, "Sent")
        XCTAssertEqual(try check("sam").lines, [])
        XCTAssertFalse(try world.list("sam", "Alice").contains { $0.id == id })
    }

    func testMessageRequestSaysOnlyNewMessageRequest() throws {
        try world.makeAccount("alice")
        try world.makeAccount("sam")
        try world.add("alice", "sam") // Sam never added Alice.
        // Sam was online once (its relay learned its invite token), then went away.
        XCTAssertEqual(try world.box.rchat("sam", ["sync", "--seconds", "1"]).status, 0)
        try world.startSync("alice")
        let id = try world.send("alice", to: "Sam", "secret first words")
        try world.waitForStatus("alice", "Sam", id, "Sent")
        XCTAssertEqual(try world.box.rchat("sam", ["settings", "show-in-alerts", "message"]).status, 0)
        XCTAssertEqual(try check("sam").lines, ["rChat\tNew message request"])
        XCTAssertEqual(try world.contacts("sam").map(\.state), ["request"])
    }

    func testCheckLeavesTheWorkToARunningEngine() throws {
        try world.makePair()
        try world.startSync("sam")
        try world.eventually("Sam's engine is up", timeout: 10) { world.syncLog("sam").contains("connected") }
        let run = try world.box.rchat("sam", ["check", "--print"])
        XCTAssertEqual(run.status, 0)
        XCTAssertEqual(run.stdout, "")
        XCTAssertTrue(run.stderr.contains("running"), run.stderr)
    }

    func testTimerInstallAndRemove() throws {
        try world.makeAccount("sam")
        let config = world.box.path("config")
        let env = ["XDG_CONFIG_HOME": config, "PATH": "/usr/bin:/bin"]
        let install = try world.box.rchat("sam", ["check", "--install-timer"], env: env)
        XCTAssertEqual(install.status, 0, install.stderr)
        let service = try String(contentsOfFile: "\(config)/systemd/user/rchat-check.service", encoding: .utf8)
        XCTAssertTrue(service.contains("ExecStart=") && service.contains(" check --home "), service)
        let timer = try String(contentsOfFile: "\(config)/systemd/user/rchat-check.timer", encoding: .utf8)
        XCTAssertTrue(timer.contains("OnUnitActiveSec=15min"), timer)
        XCTAssertTrue(install.stdout.contains("*/15 * * * * "), install.stdout)
        let remove = try world.box.rchat("sam", ["check", "--remove-timer"], env: env)
        XCTAssertEqual(remove.status, 0, remove.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(config)/systemd/user/rchat-check.timer"))
    }
}
