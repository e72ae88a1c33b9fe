import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Files the receiver cannot or will not take (issue 27, items 2 and 3), with real
/// `rchat-relay` and `rchat sync` processes: one over the receiver's limit is refused before
/// anything is written; one that the disk cannot hold (a file-size limit on the receiver's
/// process: EFBIG, as a full disk gives ENOSPC) is discarded, and every other message still
/// arrives, the sync going on and ending with 0.
extension AttachmentTests {
    func partialFiles(_ person: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: world.box.path("\(person)-home/files/partial"))) ?? []
    }

    /// Sam's stock client sends a file of 3 MB; Alice takes at most 1 MB: a row says so,
    /// nothing of it is written, its chunks are acknowledged and dropped (the relay holds
    /// nothing of it), and Sam's copy is Sent, never Delivered, with nothing left queued; a
    /// row tells Sam why.
    func testAFileOverTheReceiversLimitIsRefusedWithARowAndNothingWritten() throws {
        try chattingPair()
        try world.expectSuccess(world.box.rchat("alice", ["settings", "max-incoming-mb", "1"]))
        let settings = try world.box.rchat("alice", ["settings"])
        XCTAssertTrue(settings.stdout.contains("max-incoming-mb"), settings.stdout)
        XCTAssertFailsCleanly(try world.box.rchat("alice", ["settings", "max-incoming-mb", "0"]), status: 2, mentions: "max-incoming-mb")
        world.stopSync("alice")
        try world.startSync("alice")  // the setting is read at start
        let (path, _) = try randomFile("huge.iso", bytes: 3 * 1024 * 1024)
        let id = try sendFile("sam", to: "Alice", path)
        try world.rowBeforeDeadline("alice", "Sam",
            "Sam offered huge.iso (3.0 MB), over your limit of 1 MB; it was not downloaded (rchat settings max-incoming-mb N changes the limit).", timeout: 30)
        try world.waitForStatus("sam", "Alice", id, "Sent", timeout: 60)
        let after = try world.deliveredBarrier("sam", to: "Alice", "after the refused file")
        try world.waitForStatus("sam", "Alice", after, "Delivered")
        XCTAssertEqual(try world.status("sam", "Alice", id), "Sent", "never Delivered: it is not on Alice's device")
        XCTAssertEqual(partialFiles("alice"), [], "nothing written for it")
        let theirs = try attachment("alice", "Sam", id)
        XCTAssertEqual(theirs["received"] as? Int ?? 0, 0)
        XCTAssertNil(theirs["path"] as? String)
        XCTAssertTrue(world.syncLog("alice").contains("a file from Sam: it is over your limit of 1 MB, so it was not downloaded"), world.diagnostics())
        XCTAssertEqual(try world.rows("sam", "Alice").map(\.text), ["Alice did not download huge.iso: it is over their limit of 1 MB."])
    }

    /// A stock sender keeps to the receiver's bound of 16 files arriving at once: twenty
    /// files queued while Alice's sync was stopped all go when it starts and arrive whole,
    /// none refused, the last ones starting as the first are taken whole by the relay.
    func testTwentyFilesSentAtOnceAllArrive() throws {
        try chattingPair()
        world.stopSync("alice")
        var ids: [String] = []
        for n in 1...20 {
            let (path, _) = try randomFile("photo\(n).bin", bytes: 70_000 + n)
            ids.append(try sendFile("alice", to: "Sam", path))
        }
        try world.startSync("alice")
        for id in ids { try world.waitForStatus("alice", "Sam", id, "Delivered", timeout: 60) }
        XCTAssertEqual(try world.rows("sam", "Alice").map(\.text), [], "none refused")
    }

    /// Alice's sync runs under an 8 MiB file-size limit (twice what SQLite's WAL reaches
    /// before its checkpoint) while a 12 MiB file from Sam and a
    /// message from Bob wait at the relay: the file is discarded with a row and its partial
    /// file removed; Bob's message arrives and is Delivered; the sync stops with 0, and starts
    /// again without an error (the old code failed every batch with the file in it, exited 1
    /// at every start and left the partial file filling the disk).
    func testAFileTheDiskCannotHoldIsDiscardedAndEveryOtherMessageArrives() throws {
        try chattingPair()
        try world.makeAccount("bob")
        try world.add("alice", "bob")
        try world.add("bob", "alice")
        try world.startSync("bob")
        _ = try world.deliveredBarrier("bob", to: "Alice", "warm-up from Bob")
        world.stopSync("alice")
        let (path, _) = try randomFile("movie.mkv", bytes: 12 * 1024 * 1024)
        let file = try sendFile("sam", to: "Alice", path)
        try world.waitForStatus("sam", "Alice", file, "Sent", timeout: 60)
        let text = try world.send("bob", to: "Alice", "still reaching you")
        try world.waitForStatus("bob", "Alice", text, "Sent")

        try world.startSync("alice", fileSizeLimit: 8 * 1024 * 1024)
        try world.rowBeforeDeadline("alice", "Sam", "movie.mkv from Sam could not be saved (File too large) and was discarded.", timeout: 60)
        try world.waitForStatus("bob", "Alice", text, "Delivered", timeout: 30)
        try world.eventually("the partial file is removed", timeout: 10) { self.partialFiles("alice").isEmpty }
        XCTAssertTrue(world.isSyncRunning("alice"), world.diagnostics())
        let later = try world.deliveredBarrier("sam", to: "Alice", "after the file")
        try world.waitForStatus("sam", "Alice", later, "Delivered")
        XCTAssertEqual(try world.status("sam", "Alice", file), "Sent", "never Delivered: it is not on Alice's device")
        world.stopSync("alice")  // asserts exit 0

        // The next start finds nothing to fail on.
        try world.startSync("alice", seconds: 2, fileSizeLimit: 8 * 1024 * 1024)
        XCTAssertEqual(world.waitForSyncToEnd("alice", timeout: 30), 0, world.diagnostics())
        XCTAssertEqual(partialFiles("alice"), [])
    }
}
