import XCTest
import RChatCore
@testable import RChatCrypto

/// The file stream of attachments: chunk arithmetic, a round trip, taking a stream up again
/// from saved state, and what a changed, dropped, reordered or cut chunk does.
final class FileStreamTests: XCTestCase {
    let plain = (0..<(FileStream.plainChunkBytes * 3 + 123)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 7) }

    func testChunkArithmetic() {
        let c = FileStream.plainChunkBytes
        XCTAssertEqual(FileStream.chunkCount(size: 1), 1)
        XCTAssertEqual(FileStream.chunkCount(size: UInt64(c)), 1)
        XCTAssertEqual(FileStream.chunkCount(size: UInt64(c) + 1), 2)
        XCTAssertEqual(FileStream.plainBytes(ofChunk: 1, size: UInt64(c) + 1), 1)
        XCTAssertEqual(FileStream.plainBytes(ofChunk: 0, size: UInt64(c) + 1), c)
        XCTAssertEqual(FileStream.cipherOffset(ofChunk: 2), Int64(FileStream.headerBytes + 2 * (c + FileStream.overheadBytes)))
        XCTAssertEqual(FileStream.cipherSize(size: UInt64(plain.count)),
                       Int64(FileStream.headerBytes + 4 * FileStream.overheadBytes + plain.count))
        // A chunk with its envelope fits a relay payload (64 KiB).
        XCTAssertLessThan(FileStream.cipherChunkBytes + FileStream.headerBytes + 4 + 200, 64 * 1024)
    }

    private func seal(_ key: SecretBytes) -> (header: [UInt8], chunks: [[UInt8]], start: [UInt8]) {
        var e = FileStream.Encryptor(key: key)
        let start = e.stateBytes
        let count = FileStream.chunkCount(size: UInt64(plain.count))
        var chunks: [[UInt8]] = []
        for i in 0..<count {
            let part = Array(plain[(i * FileStream.plainChunkBytes)..<min(plain.count, (i + 1) * FileStream.plainChunkBytes)])
            chunks.append(part.withUnsafeBytes { e.seal($0, final: i == count - 1) })
        }
        return (e.header, chunks, start)
    }

    private func open(_ key: SecretBytes, _ header: [UInt8], _ chunks: [[UInt8]]) throws -> [UInt8] {
        var d = try FileStream.Decryptor(key: key, header: header)
        var out: [UInt8] = []
        for (i, c) in chunks.enumerated() { out += try c.withUnsafeBytes { try d.open($0, final: i == chunks.count - 1) } }
        return out
    }

    func testRoundTripAndEveryWayOfBreakingIt() throws {
        let key = FileStream.generateKey()
        let (header, chunks, _) = seal(key)
        XCTAssertEqual(try open(key, header, chunks), plain)
        var changed = chunks
        changed[1][5] ^= 1
        XCTAssertThrowsError(try open(key, header, changed)) { XCTAssertEqual($0 as? FileStream.OpenError, .chunk(index: 1)) }
        XCTAssertThrowsError(try open(key, header, [chunks[0], chunks[2], chunks[1], chunks[3]]), "reordered")
        XCTAssertThrowsError(try open(key, header, [chunks[0], chunks[1], chunks[3]]), "one dropped")
        XCTAssertThrowsError(try open(key, header, Array(chunks.prefix(3))), "cut before the final chunk")
        XCTAssertThrowsError(try open(FileStream.generateKey(), header, chunks), "another key")
        do {
            _ = try FileStream.Decryptor(key: key, header: Array(header.prefix(10)))
            XCTFail("a short header opens nothing")
        } catch {
            XCTAssertEqual(error, .badHeader)
        }
    }

    /// A sender makes any chunk again from the state it started with; a receiver goes on
    /// from the state after its last chunk.
    func testSavedStateMakesTheSameChunksAndTakesDecryptionUp() throws {
        let key = FileStream.generateKey()
        let (header, chunks, start) = seal(key)
        guard var again = FileStream.Encryptor(stateBytes: start) else { return XCTFail("the start state takes up") }
        for (i, chunk) in chunks.enumerated() {
            let part = Array(plain[(i * FileStream.plainChunkBytes)..<min(plain.count, (i + 1) * FileStream.plainChunkBytes)])
            XCTAssertEqual(part.withUnsafeBytes { again.seal($0, final: i == chunks.count - 1) }, chunk, "chunk \(i) made again")
        }
        var d = try FileStream.Decryptor(key: key, header: header)
        var out = try chunks[0].withUnsafeBytes { try d.open($0, final: false) }
        let saved = d.stateBytes
        guard var resumed = FileStream.Decryptor(stateBytes: saved, next: 1) else { return XCTFail("the saved state takes up") }
        for i in 1..<chunks.count { out += try chunks[i].withUnsafeBytes { try resumed.open($0, final: i == chunks.count - 1) } }
        XCTAssertEqual(out, plain)
        XCTAssertTrue(FileStream.Decryptor(stateBytes: [1, 2, 3], next: 0) == nil)
        XCTAssertTrue(FileStream.Encryptor(stateBytes: []) == nil)
    }

    func testStreamingHashMatchesTheWholeAndTakesUpFromSavedState() {
        var h = StreamingHash()
        plain.prefix(1000).withUnsafeBytes { h.update($0) }
        guard var resumed = StreamingHash(stateBytes: h.stateBytes) else { return XCTFail("the hash state takes up") }
        plain.dropFirst(1000).withUnsafeBytes { resumed.update($0) }
        let digest = resumed.finish()
        XCTAssertEqual(digest, Hash.blake2b(plain))
        XCTAssertTrue(StreamingHash(stateBytes: [0]) == nil)
    }
}
