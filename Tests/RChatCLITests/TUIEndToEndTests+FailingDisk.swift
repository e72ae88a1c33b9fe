import Foundation
import XCTest

/// The full-screen view on a failing disk (issue 28, item 2; FailingDisk): the disk under
/// Alice's home starts failing while her view is open and Sam's messages come in. Her engine
/// stops before acknowledging anything it could not store; the status bar says it stopped
/// and why, and at Ctrl-Q the view says why in one line and exits 1. Opened again on a working disk, every message
/// arrives, once, and is Delivered on Sam's side.
extension TUIEndToEndTests {
    func testTheViewOnAFailingDiskSaysSoAndLosesNothing() throws {
        try world.makePair("alice", "sam")
        try world.startSync("sam")
        var disk = FailingDisk(directory: world.box.path("alice-home"), seed: 7, controls: world.box.path(""))
        disk.perMille = 1000
        disk.heal()  // working until the view is up
        try openView("alice", env: Self.utf8.merging(disk.environment) { $1 })
        try screen("alice", "online") { $0.contains("Online") }
        disk.fail()
        let ids = try (1...3).map { try world.send("sam", to: "Alice", "on a failing disk \($0)") }
        let stopped = try screen("alice", "its engine stopped, and the bar says why") { $0.contains("Stopped (restart rChat): ") }
        XCTAssertFalse(stopped.contains("Online"), stopped)
        try screens.keys(session("alice"), "C-q")
        let shown = try screen("alice", "the view ends and says why") { $0.contains("[exited") }
        let said = shown.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        XCTAssertEqual(said.suffix(1), ["[exited 1]"], shown)
        XCTAssertEqual(said.filter { $0.hasPrefix("rchat: ") }.count, 1, "one line says why: \(shown)")
        XCTAssertTrue(said.contains { $0.hasPrefix("rchat: ") && $0.contains("disk") }, shown)
        XCTAssertFalse(disk.injected.isEmpty, "the disk failed")
        disk.heal()
        try openView("alice")
        for id in ids { try world.waitForStatus("sam", "Alice", id, "Delivered", timeout: 30) }
        XCTAssertEqual(try world.list("alice", "Sam").filter { $0.text.hasPrefix("on a failing disk") }.count, ids.count, "each once")
    }
}
