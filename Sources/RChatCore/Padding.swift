/// Pads bytes to one of a few fixed sizes, so that what carries them shows only the size
/// class, never the length of what is inside.
///
/// Layout of a padded buffer of total length T (one of the sizes, less what lies `outside`
/// it in the frame that carries it):
///
///     inner ‖ zero bytes ‖ u32 big-endian inner length
///
/// The length is at the end, so unpadding is a prefix of the buffer (no copy), and the
/// zeros are checked: a buffer whose length field lies (longer than what precedes it) or
/// whose padding is not all zero is refused.
///
/// Two levels use it:
/// - **End to end** (`payloadSizes`): every payload a client hands the relay in
///   `send`/`sendAhead`/`request`. An envelope pads its body inside its encryption so that
///   the payload is already whole (`Envelope`); the payload's own trailer then shows the
///   relay nothing but the size class.
/// - **Transport** (`wireSizes`): every sealed relay frame, so that its length on the wire
///   (4-byte length, sealed body, 16-byte tag) is one of the wire sizes.
///
/// Each wire size is its payload size plus 80 bytes: room for a `send` (13 bytes of fields),
/// a `request` (25), a `deliver` (54 with its origin) and the transport's own trailer, so a
/// payload of size S travels in wire size W(S), never the next one up.
public enum Padding {
    /// What a padded payload's length is: 176 B, 944 B, 4,016 B, 16,304 B, 64 KiB.
    public static let payloadSizes = [176, 944, 4_016, 16_304, 65_536]
    /// What a client's (and a relay's `deliver`) frame's length on the wire is, length prefix
    /// and tag included: 256 B, 1 KiB, 4 KiB, 16 KiB, 64 KiB + 80 B.
    public static let wireSizes = payloadSizes.map { $0 + 80 }
    /// The trailer: the inner length.
    public static let trailerBytes = 4

    /// `inner`, padded so that together with `outside` bytes it is the smallest of `sizes` it
    /// fits in. Beyond the largest it only gets the trailer (nothing that large is sent).
    public static func padded(_ inner: [UInt8], sizes: [Int], outside: Int = 0) -> [UInt8] {
        let total = paddedLength(of: inner.count, sizes: sizes, outside: outside)
        var out = inner
        out.reserveCapacity(total)
        out.append(contentsOf: repeatElement(0, count: total - inner.count - trailerBytes))
        let n = UInt32(inner.count)
        out.append(contentsOf: [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)])
        return out
    }

    /// The length `padded` makes of `count` bytes.
    public static func paddedLength(of count: Int, sizes: [Int], outside: Int = 0) -> Int {
        let needed = count + trailerBytes + outside
        return (sizes.first { $0 >= needed } ?? needed) - outside
    }

    /// The inner bytes of a padded buffer, where they lie in it. `checkingZeros: false` skips
    /// reading the padding, for buffers whose every byte is authenticated already (a sealed
    /// transport frame): only the length is checked then.
    public static func unpadded(_ bytes: ArraySlice<UInt8>, checkingZeros: Bool = true) throws(PaddingError) -> ArraySlice<UInt8> {
        guard bytes.count >= trailerBytes else { throw .tooShort }
        let t = bytes.endIndex - trailerBytes
        let n = Int(bytes[t]) << 24 | Int(bytes[t + 1]) << 16 | Int(bytes[t + 2]) << 8 | Int(bytes[t + 3])
        guard n <= bytes.count - trailerBytes else { throw .lengthLies }
        let end = bytes.startIndex + n
        if checkingZeros {
            var nonZero: UInt8 = 0
            for i in end..<t { nonZero |= bytes[i] }
            guard nonZero == 0 else { throw .paddingNotZero }
        }
        return bytes[bytes.startIndex..<end]
    }

    public static func unpadded(_ bytes: [UInt8]) throws(PaddingError) -> [UInt8] {
        Array(try unpadded(bytes[...]))
    }
}

/// Why padded bytes were refused.
public enum PaddingError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooShort
    case lengthLies
    case paddingNotZero

    public var description: String {
        switch self {
        case .tooShort: "padded bytes shorter than their length field"
        case .lengthLies: "a padded length longer than the bytes before it"
        case .paddingNotZero: "padding that is not all zero"
        }
    }
}
