/// What travels on a relay link between two engines: the two handshake messages, then
/// envelopes. One type byte in front, so each side knows what it is reading.
enum LinkFrame {
    case handshakeFirst([UInt8])
    case handshakeReply([UInt8])
    case envelope([UInt8])

    var isHandshake: Bool {
        if case .envelope = self { return false }
        return true
    }

    var encoded: [UInt8] {
        switch self {
        case .handshakeFirst(let b): return [1] + b
        case .handshakeReply(let b): return [2] + b
        case .envelope(let b): return [3] + b
        }
    }

    /// An envelope's bytes where they lie in `payload`, if it carries one (not copied out).
    static func envelopeBytes(in payload: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        payload.first == 3 ? payload.dropFirst() : nil
    }

    init?(_ payload: ArraySlice<UInt8>) {
        guard let type = payload.first else { return nil }
        let body = Array(payload.dropFirst())
        switch type {
        case 1: self = .handshakeFirst(body)
        case 2: self = .handshakeReply(body)
        case 3: self = .envelope(body)
        default: return nil
        }
    }
}
