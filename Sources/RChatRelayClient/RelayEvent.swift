import RChatWire

/// What a relay connection reports, in order, to the engine.
public enum RelayEvent: Equatable, Sendable {
    /// Two connections presented an equal rendezvous code; `link` is this side's number for it.
    case linked(link: LinkID, code: [UInt8])
    /// The peer's connection went away; sends on `link` are now held for its mailbox.
    case peerGone(link: LinkID)
    /// The relay took the frame numbered `seq` (forwarded live, or held): "Sent".
    case sent(seq: UInt64, forwarded: Bool)
    /// The relay refused the frame numbered `seq` and holds nothing; try again later.
    case refused(seq: UInt64, reason: RefusalReason)
    /// An item for this mailbox; acknowledge it once it is stored.
    case delivery(Delivery)
    /// Nothing more is waiting for this mailbox right now.
    case drained
    case pong(UInt64)
    /// The connection ended; always the last event. nil: closed by this side.
    case closed(RelayClientError?)
}

public enum RelayClientError: Error, Equatable, Sendable, CustomStringConvertible {
    case connectFailed(String)
    case handshakeFailed(String)
    case timedOut
    /// The relay sent an error frame (and closed).
    case relayError(RelayErrorCode?)
    case protocolViolation(String)
    case connectionLost(String)
    case closed

    public var description: String {
        switch self {
        case .connectFailed(let s): return "cannot connect to the relay: \(s)"
        case .handshakeFailed(let s): return "relay handshake failed: \(s)"
        case .timedOut: return "the relay did not answer in time"
        case .relayError(let code): return "the relay closed the connection: \(code.map { $0.description } ?? "unknown error")"
        case .protocolViolation(let s): return "the relay broke the protocol: \(s)"
        case .connectionLost(let s): return "connection to the relay lost: \(s)"
        case .closed: return "the relay connection is closed"
        }
    }
}
