import RChatCore

/// Where a delivered item came from.
public enum DeliveryOrigin: Hashable, Sendable {
    /// Sent on a link: the code that made the link (the conversation). Which mailbox sent it
    /// is not said: the relay tells no client another's mailbox id.
    case link(code: [UInt8])
    /// A message request sent to one of this mailbox's invite tokens.
    case invite(InviteToken)
    /// Cover traffic this mailbox sent itself (a `send` on link 0).
    case own
}

/// One item handed to a mailbox; acknowledge `id` once it is stored.
public struct Delivery: Equatable, Sendable {
    public let id: HeldItemID
    /// Relay time (unix seconds) at which the relay took it.
    public let heldAt: Int64
    /// The link it arrived on when that link is live on this connection, else nil.
    public let link: LinkID?
    public let origin: DeliveryOrigin
    /// The payload where it lies in the frame it came in (not copied out of it).
    public let payloadBytes: ArraySlice<UInt8>
    public var payload: [UInt8] { Array(payloadBytes) }

    public init(id: HeldItemID, heldAt: Int64, link: LinkID?, origin: DeliveryOrigin, payload: [UInt8]) {
        self.init(id: id, heldAt: heldAt, link: link, origin: origin, payloadBytes: payload[...])
    }

    public init(id: HeldItemID, heldAt: Int64, link: LinkID?, origin: DeliveryOrigin, payloadBytes: ArraySlice<UInt8>) {
        self.id = id
        self.heldAt = heldAt
        self.link = link
        self.origin = origin
        self.payloadBytes = payloadBytes
    }
}

/// What the relay says to a client (see RelayProtocol).
public enum RelayMessage: Equatable, Sendable {
    case challenge([UInt8])
    case welcome(mailbox: MailboxID, relayTime: Int64, held: UInt32)
    case linked(link: LinkID, code: [UInt8])
    case peerGone(link: LinkID)
    case sent(seq: UInt64, forwarded: Bool)
    case refused(seq: UInt64, reason: UInt8)
    case deliver(Delivery)
    case drained
    case pong(UInt64)
    case error(UInt8)

    enum Kind: UInt8 {
        case challenge = 0x81, welcome, linked, peerGone, sent, refused, deliver, drained, pong
        case error = 0xEE
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 48)
        switch self {
        case .challenge(let c):
            w.u8(Kind.challenge.rawValue); w.raw(c)
        case .welcome(let mailbox, let time, let held):
            w.u8(Kind.welcome.rawValue); w.raw(mailbox.bytes); w.u64(UInt64(bitPattern: time)); w.u32(held)
        case .linked(let link, let code):
            w.u8(Kind.linked.rawValue); w.u32(link); w.raw(code)
        case .peerGone(let link):
            w.u8(Kind.peerGone.rawValue); w.u32(link)
        case .sent(let seq, let forwarded):
            w.u8(Kind.sent.rawValue); w.u64(seq); w.u8(forwarded ? 0 : 1)
        case .refused(let seq, let reason):
            w.u8(Kind.refused.rawValue); w.u64(seq); w.u8(reason)
        case .deliver(let d):
            w = ByteWriter(capacity: 86 + d.payload.count)
            Self.writeDeliverHeader(&w, id: d.id, heldAt: d.heldAt, link: d.link ?? 0, origin: d.origin)
            w.raw(d.payloadBytes)
        case .drained:
            w.u8(Kind.drained.rawValue)
        case .pong(let v):
            w.u8(Kind.pong.rawValue); w.u64(v)
        case .error(let code):
            w.u8(Kind.error.rawValue); w.u8(code)
        }
        return w.bytes
    }

    /// The fields of a `deliver` before its payload (the relay appends the payload itself).
    public static func writeDeliverHeader(_ w: inout ByteWriter, id: HeldItemID, heldAt: Int64, link: LinkID, origin: DeliveryOrigin) {
        w.u8(Kind.deliver.rawValue); w.u64(id); w.u64(UInt64(bitPattern: heldAt)); w.u32(link)
        switch origin {
        case .link(let code): w.u8(1); w.raw(code)
        case .invite(let token): w.u8(2); w.raw(token.bytes)
        case .own: w.u8(3)
        }
    }

    public static func decode(_ body: [UInt8]) -> RelayMessage? {
        guard let first = body.first, let kind = Kind(rawValue: first) else { return nil }
        var r = ByteReader(body, offset: 1)
        do {
            let message: RelayMessage
            switch kind {
            case .challenge:
                message = .challenge(try r.raw(RelayProtocol.challengeBytes))
            case .welcome:
                message = .welcome(mailbox: MailboxID(bytes: try r.raw(32))!, relayTime: Int64(bitPattern: try r.u64()), held: try r.u32())
            case .linked:
                message = .linked(link: try r.u32(), code: try r.raw(rendezvousCodeBytes))
            case .peerGone:
                message = .peerGone(link: try r.u32())
            case .sent:
                message = .sent(seq: try r.u64(), forwarded: try r.u8() == 0)
            case .refused:
                message = .refused(seq: try r.u64(), reason: try r.u8())
            case .deliver:
                let id = try r.u64(), heldAt = Int64(bitPattern: try r.u64()), link = try r.u32()
                let origin: DeliveryOrigin
                switch try r.u8() {
                case 1: origin = .link(code: try r.raw(rendezvousCodeBytes))
                case 2: origin = .invite(InviteToken(bytes: try r.raw(16))!)
                case 3: origin = .own
                default: return nil
                }
                return .deliver(Delivery(id: id, heldAt: heldAt, link: link == 0 ? nil : link, origin: origin, payloadBytes: r.restInPlace()))
            case .drained:
                message = .drained
            case .pong:
                message = .pong(try r.u64())
            case .error:
                message = .error(try r.u8())
            }
            return r.isAtEnd ? message : nil
        } catch {
            return nil
        }
    }
}
