import Foundation

/// A message's identity: 128 bits, shown as 32 hex digits. A resend carries the original id,
/// so the receiver can keep each message once.
///
/// A new id starts with the millisecond it was made (48 bits, as in a UUIDv7) and ends with
/// 80 random bits: ids made later sort later, so the receiver's index of ids grows at its end
/// instead of touching a random page of it for every message stored.
/// Kept as two words rather than an array: no allocation, and hashing is two combines.
public struct MessageID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    public static let byteCount = 16

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self = bytes.withUnsafeBytes { Self(loading: $0) }
    }

    public init?(bytes: ArraySlice<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        self = bytes.withUnsafeBytes { Self(loading: $0) }
    }

    /// Two big-endian words from 16 bytes (the caller checked the count).
    private init(loading raw: UnsafeRawBufferPointer) {
        self.init(high: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                  low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    public init?(hex: String) {
        guard let bytes = Hex.decode(hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// The id's 16 bytes, big-endian: the order in which ids sort.
    public var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.byteCount) { buffer, count in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            raw.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            count = Self.byteCount
        }
    }

    /// A new id, made now.
    public static func random() -> MessageID {
        var generator = SystemRandomNumberGenerator()
        return make(milliseconds: UInt64(max(0, Date().timeIntervalSince1970 * 1000)), using: &generator)
    }

    /// An id made at `milliseconds` since 1970, its other 80 bits from `generator` (one
    /// 64-bit draw and part of another: each draw of the system generator is a getrandom call).
    public static func make<G: RandomNumberGenerator>(milliseconds: UInt64, using generator: inout G) -> MessageID {
        let a = generator.next(), b = generator.next()
        return MessageID(high: (milliseconds & 0xFFFF_FFFF_FFFF) << 16 | (a >> 48), low: b)
    }

    /// When the id was made (milliseconds since 1970), as its maker's clock said.
    public var milliseconds: UInt64 { high >> 16 }

    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }

    public static func < (a: MessageID, b: MessageID) -> Bool { (a.high, a.low) < (b.high, b.low) }
}
