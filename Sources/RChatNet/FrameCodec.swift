/// Frames on the wire: a 4-byte big-endian length, then that many bytes. The length is
/// checked against a hard maximum as soon as its 4 bytes are in, before any of the body
/// is kept, so a hostile prefix costs nothing.
public enum FrameCodec {
    public static let headerBytes = 4

    /// Appends one frame (header and body) to `out`.
    public static func append(_ body: [UInt8], to out: inout ByteQueue) {
        out.appendU32(UInt32(body.count))
        out.append(contentsOf: body)
    }

    public static func encode(_ body: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(body.count + headerBytes)
        let n = UInt32(body.count)
        out.append(UInt8(truncatingIfNeeded: n >> 24)); out.append(UInt8(truncatingIfNeeded: n >> 16))
        out.append(UInt8(truncatingIfNeeded: n >> 8)); out.append(UInt8(truncatingIfNeeded: n))
        out.append(contentsOf: body)
        return out
    }
}

public enum FrameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The length prefix announced more than the maximum.
    case oversized(announced: Int, maximum: Int)
    /// An empty frame: nothing in the protocol is empty, so it is garbage.
    case empty

    public var description: String {
        switch self {
        case .oversized(let a, let m): return "frame length \(a) exceeds the maximum \(m)"
        case .empty: return "empty frame"
        }
    }
}

/// Collects stream bytes and cuts them into frames.
public struct FrameDecoder: Sendable {
    public let maximumBodyBytes: Int
    private var buffer = ByteQueue()

    public init(maximumBodyBytes: Int) {
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// Bytes of a frame begun but not finished.
    public var bufferedBytes: Int { buffer.count }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) { buffer.append(bytes) }
    public mutating func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    /// The next complete frame body, nil when more bytes are needed.
    public mutating func next() throws(FrameError) -> [UInt8]? {
        guard buffer.count >= FrameCodec.headerBytes else { return nil }
        let length = Int(buffer.u32(at: 0))
        guard length <= maximumBodyBytes else { throw .oversized(announced: length, maximum: maximumBodyBytes) }
        guard length > 0 else { throw .empty }
        guard buffer.count >= FrameCodec.headerBytes + length else { return nil }
        let body = buffer.bytes(at: FrameCodec.headerBytes, count: length)
        buffer.consume(FrameCodec.headerBytes + length)
        return body
    }

    public mutating func reset() { buffer.removeAll() }
}
