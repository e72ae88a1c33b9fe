/// A message's identity: 128 random bits, shown as 32 hex digits. A resend carries the
/// original id, so the receiver can keep each message once.
public struct MessageID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    public static let byteCount = 16

    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    public init?(hex: String) {
        guard let bytes = Hex.decode(hex) else { return nil }
        self.init(bytes: bytes)
    }

    public static func random() -> MessageID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> MessageID {
        // Two 64-bit draws, not sixteen byte draws: each draw of the system generator is a
        // getrandom call.
        var bytes = [UInt8]()
        bytes.reserveCapacity(byteCount)
        for _ in 0..<2 {
            let word = generator.next()
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return MessageID(bytes: bytes)!
    }

    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }

    public static func < (a: MessageID, b: MessageID) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
}
