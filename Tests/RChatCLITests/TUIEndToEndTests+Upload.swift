import Foundation
import XCTest

extension TUIEndToEndTests {
    /// Alice's view sends a file while Sam is away and the relay holds only 1 MiB for his
    /// mailbox: the file's line says it waits for room at the relay (not "0 B/s"); once Sam
    /// is back the rest goes and the line no longer waits.
    func testAFileWaitingForRoomAtTheRelaySaysSoInTheView() throws {
        world.stopRelay(signal: SIGKILL)
        try world.startRelay(arguments: ["--quota-bytes", String(1 << 20)])
        world.steadyTraffic = "off"  // the quota counts the bytes held: no dummies in them
        try world.makePair("alice", "sam")
        try world.startSync("sam")
        try openView("alice")
        try screen("alice", "Sam listed, online") { $0.contains("Sam") && $0.contains("Online") }
        try screens.keys(session("alice"), "Enter")
        let warmUp = try world.send("alice", to: "Sam", "warm-up")
        try world.waitForStatus("alice", "Sam", warmUp, "Delivered", timeout: 30)
        world.stopSync("sam")

        var bytes = [UInt8](repeating: 0, count: 3 * 1024 * 1024)
        var g = SystemRandomNumberGenerator()
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: g.next()) }
        let path = world.box.path("held.bin")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try world.expectSuccess(world.box.rchat("alice", ["send", "Sam", "--file", path]))
        let waiting = try screen("alice", "the file's line says it waits for room", seconds: 60) {
            $0.contains("waiting for room at the relay")
        }
        XCTAssertTrue(waiting.contains("File · held.bin · 3.0 MB"), waiting)
        XCTAssertFalse(waiting.contains("0 B/s"), waiting)

        try world.startSync("sam")
        let moved = try screen("alice", "the file no longer waits once Sam is back", seconds: 90) {
            !$0.contains("waiting for") && !$0.contains("%")
        }
        XCTAssertTrue(moved.contains("File · held.bin · 3.0 MB"), moved)
        try world.eventually("the file is Delivered", timeout: 60) {
            try self.world.list("alice", "Sam").contains { $0.text.contains("held.bin") && $0.status == "Delivered" }
        }
    }
}
