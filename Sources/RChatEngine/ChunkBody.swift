import RChatCore
import RChatCrypto

/// The body of a file chunk's envelope (`EnvelopeKind.chunk`), as the peer wrote it:
///
///     u32 chunk index
///     24  the stream header (chunk 0 only)
///     ..  the sealed chunk: its plaintext length (`FileStream.plainBytes`) + 17 bytes
///
/// Read in two steps, as the receiver does: the index first (a chunk already stored is a
/// copy, whatever follows), then the rest against the file's size.
enum ChunkBody {
    enum Refusal: Error, Equatable {
        case noIndex, noStreamHeader, wrongLength
    }

    static func encoded(index: Int, streamHeader: [UInt8], sealed: [UInt8]) -> [UInt8] {
        var body = ByteWriter(capacity: 4 + FileStream.headerBytes + sealed.count)
        body.u32(UInt32(index))
        if index == 0 { body.raw(streamHeader) }
        body.raw(sealed)
        return body.bytes
    }

    static func index(of body: [UInt8]) -> Int? {
        var r = ByteReader(body)
        return (try? r.u32()).map(Int.init)
    }

    /// The stream header (chunk 0) and the sealed chunk of a body whose index is `index`, in a
    /// file of `size` bytes.
    static func parts(of body: [UInt8], index: Int, size: UInt64) -> Result<(streamHeader: [UInt8]?, sealed: [UInt8]), Refusal> {
        var r = ByteReader(body)
        guard (try? r.u32()).map(Int.init) == index else { return .failure(.noIndex) }
        var header: [UInt8]?
        if index == 0 {
            guard let bytes = try? r.raw(FileStream.headerBytes) else { return .failure(.noStreamHeader) }
            header = bytes
        }
        let expected = FileStream.plainBytes(ofChunk: index, size: size) + FileStream.overheadBytes
        guard r.remaining == expected else { return .failure(.wrongLength) }
        return .success((header, r.rest()))
    }
}
