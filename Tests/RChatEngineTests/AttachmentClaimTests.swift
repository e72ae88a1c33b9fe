import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatStore
@testable import RChatEngine

/// A contact whose files claim what they are not (issue 27, item 2): Sam's keys in a raw
/// client of the relay protocol, meeting Alice's engine at a real relay, sends properly
/// sealed items a stock client would never send.
final class AttachmentClaimTests: RelayEngineTestCase {
    /// An item claiming `size` bytes (its content is one line at most).
    func claim(_ name: String, size: UInt64) throws -> [UInt8] {
        let key = FileStream.generateKey()
        return try MessageContent.attachment(Attachment(kind: .file, name: name, size: size, contentHash: [UInt8](repeating: 1, count: 32),
                                                        key: key.withBytes { Array(UnsafeBufferPointer(start: $0, count: key.count)) })).encoded()
    }

    /// The database's size as of its last commit (its pages, whether in the file or still
    /// in the WAL): what it holds, however the WAL happens to be checkpointed.
    func storeBytes(_ service: AccountService) throws -> Int64 {
        let pages = try XCTUnwrap(try service.store.database.queryOne("PRAGMA page_count")).int64(at: 0)
        let size = try XCTUnwrap(try service.store.database.queryOne("PRAGMA page_size")).int64(at: 0)
        return pages * size
    }

    func waitForLog(_ line: String, count: Int = 1) throws {
        try untilDeadline(line, seconds: 30) { logLines.all.filter { $0.contains(line) }.count >= count }
    }

    /// Twenty one-line "files", each declaring 2^40 bytes and followed by a chunk of the
    /// length such a file's chunk has: the database grows by less than 256 KiB (before
    /// ranges, each file was a 2.2 MB bitmap, and each chunk wrote one again: the store's
    /// files, with the WAL, grew by 76 MB), nothing is written to
    /// disk for them, each has its row, and Sam's next message arrives as ever.
    func testTwentyFilesClaimingATerabyteEachBarelyGrowTheStore() throws {
        let (alice, engine, send) = try hostileSamMeetsAlice()
        let before = try storeBytes(alice)
        var chunk = ByteWriter()
        chunk.u32(1)
        chunk.raw([UInt8](repeating: 0x5A, count: FileStream.cipherChunkBytes))
        for n in 1...20 {
            let id = MessageID.random()
            try send(.message, id, try claim("line\(n).txt", size: 1 << 40))
            try send(.chunk, id, chunk.bytes)
        }
        let hello = MessageID.random()
        try send(.message, hello, MessageContent.text("after the claims").encoded())
        try untilDeadline("Sam's message after the claims", seconds: 60) { try self.messages(alice, "Sam").contains { $0.id == hello } }
        let grown = try storeBytes(alice) - before
        print("twenty claims of 2^40 bytes grew the database by \(grown) bytes")
        XCTAssertLessThan(grown, 256 << 10, "the store grew by \(grown) bytes")
        let refused = try rows(alice, "Sam").map(\.text).filter { $0.contains("over your limit") }
        XCTAssertEqual(refused.count, 20, "\(refused)")
        XCTAssertEqual(refused.first, "Sam offered line1.txt (1.0 TB), over your limit of 2048 MB; it was not downloaded (rchat settings max-incoming-mb N changes the limit).")
        let partial = (try? FileManager.default.contentsOfDirectory(atPath: alice.locations.home + "/files/partial")) ?? []
        XCTAssertEqual(partial, [], "nothing written for them")
        let files = try messages(alice, "Sam").filter { if case .attachment = $0.content { true } else { false } }
        XCTAssertEqual(files.count, 20)
        XCTAssertTrue(files.allSatisfy { $0.transfer == .discarded(reason: "it is over your limit of 2048 MB, so it was not downloaded") })
        XCTAssertTrue(engine.stop())
    }

    /// With the limit at its largest, a file that claims more than the disk has free (real
    /// `statvfs`, less the 64 MiB margin) is refused with a row before anything is written,
    /// and so is one that fits alone but not beside what the contact's file arriving still
    /// needs.
    func testAFileLargerThanTheFreeDiskIsRefused() throws {
        let (alice, engine, send) = try hostileSamMeetsAlice { try $0.setSetting(.maxIncoming, "1048576") }
        let free = try XCTUnwrap(AttachmentFiles(home: alice.locations.home).freeBytes())
        guard free + (1 << 30) <= Attachment.maximumSize else { throw XCTSkip("this disk has more free than a file can claim") }
        guard free > 4 << 30 else { throw XCTSkip("half of this disk's free space is too little to fit a file of it and the margin") }
        let half = free / 2 + (1 << 30)
        let (first, second, whole) = (MessageID.random(), MessageID.random(), MessageID.random())
        try send(.message, first, try claim("half.img", size: half))
        try send(.message, second, try claim("other-half.img", size: half))
        try send(.message, whole, try claim("disk.img", size: free + (1 << 30)))
        try waitForLog("a file from Sam: the disk had no room for it", count: 2)
        let rows = try rows(alice, "Sam").map(\.text)
        XCTAssertEqual(rows.count, 2, "\(rows)")
        for (row, name) in zip(rows, ["other-half.img", "disk.img"]) {
            XCTAssertTrue(row.hasPrefix("Sam offered \(name) (") && row.contains("), more than this disk can take (")
                          && row.hasSuffix(" free); it was not downloaded."), row)
        }
        let transfers = Dictionary(uniqueKeysWithValues: try messages(alice, "Sam").map { ($0.id, $0.transfer) })
        XCTAssertEqual(transfers[first], .moving(done: 0), "it fits alone")
        for id in [second, whole] {
            XCTAssertEqual(transfers[id], .discarded(reason: "the disk had no room for it, so it was not downloaded"))
        }
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: alice.locations.home + "/files/partial")) ?? [], [])
        XCTAssertTrue(engine.stop())
    }

    /// Files arriving from one contact at once are bounded: the seventeenth offer while
    /// sixteen are moving is refused with a row; once one of them is discarded, the next offer
    /// is taken.
    func testTheSeventeenthFileAtOnceIsRefused() throws {
        let (alice, engine, send) = try hostileSamMeetsAlice()
        var ids: [MessageID] = []
        for n in 1...17 {
            let id = MessageID.random()
            ids.append(id)
            try send(.message, id, try claim("photo\(n).jpg", size: 100_000))
        }
        try waitForLog("a file from Sam: too many files from this contact")
        XCTAssertEqual(try rows(alice, "Sam").map(\.text),
                       ["Sam offered photo17.jpg (97.7 KB) while 16 of their files were still arriving; it was not downloaded."])
        let moving = try messages(alice, "Sam").filter { if case .moving = $0.transfer { true } else { false } }
        XCTAssertEqual(moving.count, 16)
        // A chunk of the wrong key discards the first one: one place is free again.
        var chunk = ByteWriter()
        chunk.u32(0)
        chunk.raw([UInt8](repeating: 0, count: FileStream.headerBytes + FileStream.plainChunkBytes + FileStream.overheadBytes))
        try send(.chunk, ids[0], chunk.bytes)
        try waitForLog("a file from Sam was discarded")
        let next = MessageID.random()
        try send(.message, next, try claim("photo18.jpg", size: 100_000))
        try untilDeadline("the next offer is taken", seconds: 20) {
            guard let m = try self.messages(alice, "Sam").first(where: { $0.id == next }) else { return false }
            if case .moving = m.transfer { return true }
            return false
        }
        XCTAssertTrue(engine.stop())
    }
}
