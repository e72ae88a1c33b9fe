/// Big-endian binary encoding for codes, wire frames and sealed records.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func u8(_ v: UInt8) { bytes.append(v) }
    public mutating func u16(_ v: UInt16) { bytes.append(UInt8(v >> 8)); bytes.append(UInt8(v & 0xff)) }
    public mutating func u32(_ v: UInt32) { for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(s))) } }
    public mutating func u64(_ v: UInt64) { for s in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(s))) } }
    public mutating func raw<C: Collection>(_ v: C) where C.Element == UInt8 { bytes.append(contentsOf: v) }
    // Concrete forms of the common cases: a generic call across modules is not
    // specialized, and looked up its type metadata on every frame.
    public mutating func raw(_ v: [UInt8]) { bytes.append(contentsOf: v) }
    public mutating func raw(_ v: ArraySlice<UInt8>) { bytes.append(contentsOf: v) }
    /// A message id's 16 bytes, written from its two words (no array made for them).
    public mutating func raw(_ id: MessageID) { u64(id.high); u64(id.low) }
    /// A byte string with a 16-bit length in front.
    public mutating func short<C: Collection>(_ v: C) where C.Element == UInt8 {
        precondition(v.count <= Int(UInt16.max))
        u16(UInt16(v.count)); bytes.append(contentsOf: v)
    }
    /// A byte string with a 32-bit length in front.
    public mutating func long<C: Collection>(_ v: C) where C.Element == UInt8 { u32(UInt32(v.count)); bytes.append(contentsOf: v) }
    public mutating func long(_ v: [UInt8]) { u32(UInt32(v.count)); bytes.append(contentsOf: v) }
    public mutating func short(_ v: [UInt8]) {
        precondition(v.count <= Int(UInt16.max))
        u16(UInt16(v.count)); bytes.append(contentsOf: v)
    }
    public mutating func string(_ s: String) { short(Array(s.utf8)) }
}

public struct ByteReaderError: Error, Equatable, Sendable {
    public let offset: Int
    public init(offset: Int) { self.offset = offset }
}

/// Reads what ByteWriter wrote; every read checks the bounds and throws past the end.
public struct ByteReader {
    private let bytes: [UInt8]
    public private(set) var offset: Int

    public init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    public var remaining: Int { bytes.count - offset }
    public var isAtEnd: Bool { offset == bytes.count }

    public mutating func u8() throws -> UInt8 { UInt8(try integer(bytes: 1)) }
    public mutating func u16() throws -> UInt16 { UInt16(try integer(bytes: 2)) }
    public mutating func u32() throws -> UInt32 { UInt32(try integer(bytes: 4)) }
    public mutating func u64() throws -> UInt64 { try integer(bytes: 8) }

    /// A big-endian integer of `count` bytes, read in place (no array per field).
    private mutating func integer(bytes count: Int) throws -> UInt64 {
        guard count <= remaining else { throw ByteReaderError(offset: offset) }
        var v: UInt64 = 0
        for i in offset..<(offset + count) { v = v << 8 | UInt64(bytes[i]) }
        offset += count
        return v
    }

    public mutating func raw(_ count: Int) throws -> [UInt8] {
        guard count >= 0, count <= remaining else { throw ByteReaderError(offset: offset) }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// The next `count` bytes in place (no copy).
    public mutating func slice(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw ByteReaderError(offset: offset) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    public mutating func short() throws -> [UInt8] { try raw(Int(try u16())) }
    public mutating func long(max: Int = Int.max) throws -> [UInt8] {
        let n = Int(try u32())
        guard n <= max else { throw ByteReaderError(offset: offset) }
        return try raw(n)
    }
    public mutating func string() throws -> String {
        let b = try short()
        guard let s = String(validating: b, as: UTF8.self) else { throw ByteReaderError(offset: offset) }
        return s
    }
    /// What is left, in place (no copy).
    public mutating func restInPlace() -> ArraySlice<UInt8> {
        defer { offset = bytes.count }
        return bytes[offset...]
    }
    public mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

/// Bytes as a dictionary key, hashed in one call (an array of bytes hashes them one by one).
public struct HashedBytes: Hashable, Sendable {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
