/// The host a connection came from, as a relay counts connections per host: an IPv4
/// address whole (also one mapped into IPv6), an IPv6 address by its /64 prefix — one
/// machine usually has a whole /64 to pick addresses from.
///
/// Layout: the 16 bytes of an IPv6 address; IPv4 as ::ffff:a.b.c.d; for IPv6 the last 8
/// bytes are zero.
public struct HostAddress: Hashable, Sendable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    /// From the 16 bytes `rchat_accept_peer` fills in.
    public init(bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == 16)
        var h: UInt64 = 0, l: UInt64 = 0
        for i in 0..<8 { h = h << 8 | UInt64(bytes[i]) }
        for i in 8..<16 { l = l << 8 | UInt64(bytes[i]) }
        high = h
        low = Self.isIPv4(high: h, low: l) ? l : 0
    }

    /// The two halves as `high` and `low` give them (what the relay's persistence stores).
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    private static func isIPv4(high: UInt64, low: UInt64) -> Bool { high == 0 && low >> 32 == 0xFFFF }

    public var description: String {
        if Self.isIPv4(high: high, low: low) {
            return (0..<4).map { String(low >> UInt64(24 - 8 * $0) & 0xFF) }.joined(separator: ".")
        }
        let groups = (0..<4).map { String(high >> UInt64(48 - 16 * $0) & 0xFFFF, radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
