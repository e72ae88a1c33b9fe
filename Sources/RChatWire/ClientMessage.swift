import RChatCore

/// What a client says to the relay once the transport is up (see RelayProtocol).
public enum ClientMessage: Equatable, Sendable {
    case auth(mailboxKey: [UInt8], signature: [UInt8])
    case present([[UInt8]])
    /// Salts of invite tokens; the relay derives each token from the salt and this
    /// connection's mailbox (`InviteToken.derived`).
    case registerInvites(salts: [[UInt8]])
    case send(seq: UInt64, link: LinkID, payload: [UInt8])
    case request(seq: UInt64, token: InviteToken, payload: [UInt8])
    case acknowledge([HeldItemID])
    case ping(UInt64)
    /// As `send`, handed over ahead of what the mailbox already holds: for handshake
    /// messages, which only mean something while both ends are online.
    case sendAhead(seq: UInt64, link: LinkID, payload: [UInt8])
    /// After `keys rotate`: this connection's mailbox takes over the mailbox of `oldKey`,
    /// proven by that key's signature (`MailboxMove.statement`).
    case moveMailbox(oldKey: [UInt8], signature: [UInt8])
    /// The client gives this link up (a contact blocked, or set up again under new keys):
    /// the relay forgets it and tells the peer `peerGone`, so a later link of the two is
    /// taken up by both ends.
    case leave(link: LinkID)

    enum Kind: UInt8 {
        case auth = 0x01, present, registerInvites, send, request, acknowledge, ping, sendAhead, moveMailbox, leave
    }

    public func encoded() -> [UInt8] {
        var w: ByteWriter
        switch self {
        case .auth(let key, let signature):
            w = ByteWriter(capacity: 97)
            w.u8(Kind.auth.rawValue); w.raw(key); w.raw(signature)
        case .present(let codes):
            w = ByteWriter(capacity: 2 + codes.count * 32)
            w.u8(Kind.present.rawValue); w.u8(UInt8(codes.count))
            for c in codes { w.raw(c) }
        case .registerInvites(let salts):
            w = ByteWriter(capacity: 2 + salts.count * InviteToken.saltBytes)
            w.u8(Kind.registerInvites.rawValue); w.u8(UInt8(salts.count))
            for salt in salts { w.raw(salt) }
        case .send(let seq, let link, let payload), .sendAhead(let seq, let link, let payload):
            w = ByteWriter(capacity: 13 + payload.count)
            w.u8(self.isAhead ? Kind.sendAhead.rawValue : Kind.send.rawValue); w.u64(seq); w.u32(link); w.raw(payload)
        case .request(let seq, let token, let payload):
            w = ByteWriter(capacity: 25 + payload.count)
            w.u8(Kind.request.rawValue); w.u64(seq); w.raw(token.bytes); w.raw(payload)
        case .acknowledge(let ids):
            w = ByteWriter(capacity: 3 + ids.count * 8)
            w.u8(Kind.acknowledge.rawValue); w.u16(UInt16(ids.count))
            for id in ids { w.u64(id) }
        case .ping(let v):
            w = ByteWriter(capacity: 9)
            w.u8(Kind.ping.rawValue); w.u64(v)
        case .moveMailbox(let key, let signature):
            w = ByteWriter(capacity: 97)
            w.u8(Kind.moveMailbox.rawValue); w.raw(key); w.raw(signature)
        case .leave(let link):
            w = ByteWriter(capacity: 5)
            w.u8(Kind.leave.rawValue); w.u32(link)
        }
        return w.bytes
    }

    /// A `sendAhead`.
    public var isAhead: Bool {
        if case .sendAhead = self { return true }
        return false
    }

    /// Parses a decrypted body; nil for anything malformed (unknown kind, bad counts,
    /// wrong lengths, trailing bytes, oversized payload).
    public static func decode(_ body: [UInt8]) -> ClientMessage? {
        guard let first = body.first, let kind = Kind(rawValue: first) else { return nil }
        var r = ByteReader(body, offset: 1)
        do {
            let message: ClientMessage
            switch kind {
            case .auth:
                message = .auth(mailboxKey: try r.raw(32), signature: try r.raw(64))
            case .present:
                let n = Int(try r.u8())
                guard n >= 1, n <= RelayProtocol.maximumCodesPerPresent else { return nil }
                message = .present(try (0..<n).map { _ in try r.raw(rendezvousCodeBytes) })
            case .registerInvites:
                let n = Int(try r.u8())
                guard n >= 1, n <= RelayProtocol.maximumInvitesPerRegister else { return nil }
                message = .registerInvites(salts: try (0..<n).map { _ in try r.raw(InviteToken.saltBytes) })
            case .send, .sendAhead:
                let seq = try r.u64(), link = try r.u32()
                guard r.remaining <= RelayProtocol.maximumPayloadBytes else { return nil }
                message = kind == .send ? .send(seq: seq, link: link, payload: r.rest())
                                        : .sendAhead(seq: seq, link: link, payload: r.rest())
            case .request:
                let seq = try r.u64(), token = InviteToken(bytes: try r.raw(16))!
                guard r.remaining <= RelayProtocol.maximumPayloadBytes else { return nil }
                message = .request(seq: seq, token: token, payload: r.rest())
            case .acknowledge:
                let n = Int(try r.u16())
                guard n >= 1, n <= RelayProtocol.maximumAcknowledgementsPerFrame else { return nil }
                message = .acknowledge(try (0..<n).map { _ in try r.u64() })
            case .ping:
                message = .ping(try r.u64())
            case .moveMailbox:
                message = .moveMailbox(oldKey: try r.raw(32), signature: try r.raw(64))
            case .leave:
                message = .leave(link: try r.u32())
            }
            return r.isAtEnd ? message : nil
        } catch {
            return nil
        }
    }
}
