import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatRelayClient
@testable import RChatEngine

/// A sender that misbehaves with files: Sam's keys in a raw client of the relay protocol,
/// meeting Alice's engine at a real relay. Chunks for no file, past the end, of the wrong
/// length or twice change nothing; a file whose hash lies is discarded with a row and
/// reported as could not be read; a name with `../` lands in the home, cleaned.
final class AttachmentHostileSenderTests: RelayEngineTestCase {
    func testBadChunksAndALyingHashNeverMakeAWholeFile() throws {
        // Sam, as a raw client with his own keys, starting over.
        let (alice, aliceEngine, send) = try hostileSamMeetsAlice()
        /// A file of two chunks, encrypted as `FileStream` does; `hash` may lie.
        func file(_ plain: [UInt8], name: String, hash: [UInt8]? = nil) -> (item: MessageContent, chunks: [[UInt8]]) {
            let key = FileStream.generateKey()
            var encryptor = FileStream.Encryptor(key: key)
            let cut = FileStream.plainChunkBytes
            let parts = [Array(plain[..<cut]), Array(plain[cut...])]
            var chunks: [[UInt8]] = []
            for (i, part) in parts.enumerated() {
                var body = ByteWriter()
                body.u32(UInt32(i))
                if i == 0 { body.raw(encryptor.header) }
                body.raw(part.withUnsafeBytes { encryptor.seal($0, final: i == 1) })
                chunks.append(body.bytes)
            }
            var h = StreamingHash()
            plain.withUnsafeBytes { h.update($0) }
            let real = h.finish()
            let attachment = Attachment(kind: .file, name: name, size: UInt64(plain.count), contentHash: hash ?? real,
                                        key: key.withBytes { Array(UnsafeBufferPointer(start: $0, count: key.count)) })
            return (.attachment(attachment), chunks)
        }
        func waitForLog(_ line: String, count: Int = 1) throws {
            try untilDeadline(line, seconds: 20) { logLines.all.filter { $0.contains(line) }.count >= count }
        }

        // Chunks for a file never announced, then past the end and of the wrong length.
        let lying = file([UInt8](repeating: 7, count: FileStream.plainChunkBytes + 1000), name: "payroll.xlsx", hash: [UInt8](repeating: 0, count: 32))
        let lyingID = MessageID.random()
        try send(.chunk, lyingID, lying.chunks[1])
        try waitForLog("a file chunk from Sam for no file it sent")
        try send(.message, lyingID, lying.item.encoded())
        var pastEnd = lying.chunks[1]
        pastEnd[3] = 9
        try send(.chunk, lyingID, pastEnd)
        try send(.chunk, lyingID, Array(lying.chunks[1].dropLast()))
        try waitForLog("a file chunk from Sam past the file's end")
        try waitForLog("a file chunk from Sam of the wrong length")
        // Both real chunks, one twice: every chunk decrypts, but the hash lies.
        try send(.chunk, lyingID, lying.chunks[1])
        try send(.chunk, lyingID, lying.chunks[1])
        try send(.chunk, lyingID, lying.chunks[0])
        try waitForLog("a file from Sam was discarded")
        let discarded = try XCTUnwrap(try messages(alice, "Sam").first { $0.id == lyingID })
        XCTAssertEqual(discarded.transfer, .discarded(reason: "it did not match what Sam sent"))
        XCTAssertEqual(try rows(alice, "Sam").map(\.text),
                       ["payroll.xlsx from Sam could not be read and was discarded. Sam has been told, so they can send it again."])
        let received = alice.locations.home + "/files/received"
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: received)) ?? [], [], "nothing kept of it")
        try untilDeadline("the partial file is removed", seconds: 10) {
            ((try? FileManager.default.contentsOfDirectory(atPath: alice.locations.home + "/files/partial")) ?? []).isEmpty
        }

        // An honest file with a hostile name: it lands in files/received under a clean name.
        let plain = (0..<(FileStream.plainChunkBytes + 5)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let honest = file(plain, name: "../../.bashrc\u{1B}[2J")
        let honestID = MessageID.random()
        try send(.message, honestID, honest.item.encoded())
        try send(.chunk, honestID, honest.chunks[1])
        try send(.chunk, honestID, honest.chunks[0])
        try untilDeadline("the honest file is whole", seconds: 20) {
            if case .complete = try self.messages(alice, "Sam").first(where: { $0.id == honestID })?.transfer { return true }
            return false
        }
        guard case .complete(let path)? = try messages(alice, "Sam").first(where: { $0.id == honestID })?.transfer else { return XCTFail() }
        XCTAssertEqual(path, received + "/bashrc[2J")
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), plain)
        XCTAssertTrue(aliceEngine.stop())
    }
}
