import RChatCore

/// What travels on a relay link between two engines: the two handshake messages, then
/// envelopes. One type byte in front, so each side knows what it is reading.
///
/// On the relay every link frame is padded (`Padding`: type ‖ bytes ‖ zeros ‖ u32 length of
/// type and bytes) to one of `Padding.payloadSizes`. An envelope is already as long as its
/// size class (it pads inside its encryption), so its trailer only repeats the size class.
enum LinkFrame {
    case handshakeFirst([UInt8])
    case handshakeReply([UInt8])
    case envelope([UInt8])

    var isHandshake: Bool {
        if case .envelope = self { return false }
        return true
    }

    /// The padded payload handed to the relay.
    var encoded: [UInt8] {
        let inner: [UInt8]
        switch self {
        case .handshakeFirst(let b): inner = [1] + b
        case .handshakeReply(let b): inner = [2] + b
        case .envelope(let b): inner = [3] + b
        }
        return Padding.padded(inner, sizes: Padding.payloadSizes)
    }

    /// An envelope's bytes where they lie in `payload`, if it carries one (not copied out).
    static func envelopeBytes(in payload: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let inner = try? Padding.unpadded(payload) else { return nil }
        return inner.first == 3 ? inner.dropFirst() : nil
    }

    /// nil for a payload that does not unpad or has no known type.
    init?(_ payload: ArraySlice<UInt8>) {
        guard let inner = try? Padding.unpadded(payload), let type = inner.first else { return nil }
        let body = Array(inner.dropFirst())
        switch type {
        case 1: self = .handshakeFirst(body)
        case 2: self = .handshakeReply(body)
        case 3: self = .envelope(body)
        default: return nil
        }
    }
}
