import XCTest
import RChatCrypto
@testable import RChatEngine

/// A file chunk's body as the peer wrote it (`ChunkBody`): what the sender writes, the
/// receiver reads back; the stream header is in chunk 0 only; every other length is refused.
final class ChunkBodyTests: XCTestCase {
    let size = UInt64(FileStream.plainChunkBytes + 10)
    let header = [UInt8](repeating: 7, count: FileStream.headerBytes)

    func sealed(_ index: Int) -> [UInt8] {
        [UInt8](repeating: UInt8(index), count: FileStream.plainBytes(ofChunk: index, size: size) + FileStream.overheadBytes)
    }

    func testWhatTheSenderWritesTheReceiverReads() throws {
        for index in [0, 1] {
            let body = ChunkBody.encoded(index: index, streamHeader: header, sealed: sealed(index))
            XCTAssertEqual(ChunkBody.index(of: body), index)
            let parts = try ChunkBody.parts(of: body, index: index, size: size).get()
            XCTAssertEqual(parts.streamHeader, index == 0 ? header : nil, "the stream header travels in chunk 0 only")
            XCTAssertEqual(parts.sealed, sealed(index))
        }
        XCTAssertEqual(ChunkBody.encoded(index: 1, streamHeader: header, sealed: sealed(1)).count, 4 + sealed(1).count)
    }

    func testABodyOfAnyOtherShapeIsRefused() {
        XCTAssertNil(ChunkBody.index(of: [0, 0, 1]), "no index")
        let first = ChunkBody.encoded(index: 0, streamHeader: header, sealed: sealed(0))
        XCTAssertEqual(refusal(Array(first.prefix(4 + FileStream.headerBytes - 1)), 0), .noStreamHeader)
        XCTAssertEqual(refusal(first.dropLast(), 0), .wrongLength)
        XCTAssertEqual(refusal(first + [0], 0), .wrongLength)
        let last = ChunkBody.encoded(index: 1, streamHeader: [], sealed: sealed(1))
        XCTAssertEqual(refusal(last, 0), .noIndex, "read as another chunk than its own")
        XCTAssertEqual(refusal(last + [0], 1), .wrongLength)
        XCTAssertEqual(refusal(ChunkBody.encoded(index: 1, streamHeader: [], sealed: sealed(0)), 1), .wrongLength,
                       "the last chunk is shorter than a whole one")
    }

    private func refusal(_ body: [UInt8], _ index: Int) -> ChunkBody.Refusal? {
        if case .failure(let refusal) = ChunkBody.parts(of: body, index: index, size: size) { return refusal }
        return nil
    }
}
