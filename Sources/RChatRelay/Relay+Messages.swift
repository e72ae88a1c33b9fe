import RChatCore
import RChatCrypto
import RChatNet
import RChatWire

/// What the relay does with each frame: handshake, authentication, then the messages.
extension Relay {
    func received(_ frame: [UInt8], on session: Session) {
        thread.check()
        switch session.phase {
        case .awaitingHello:
            session.counters.count(FrameCounters.Inbound.hello)
            handleHello(frame, on: session)
        case .awaitingAuth(let channel, let transcript, let challenge):
            guard let body = open(frame, channel, on: session) else { return }
            guard let message = ClientMessage.decode(body) else { return fail(session, .malformed, because: "malformed frame") }
            session.counters.count(message.counterKind)
            guard case .auth(let key, let signature) = message else {
                return fail(session, .notAuthenticated, because: "\(message.counterKind) frame before authentication")
            }
            handleAuth(key: key, signature: signature, transcript: transcript, challenge: challenge, channel: channel, on: session)
        case .ready(let channel, let mailbox):
            guard let body = open(frame, channel, on: session) else { return }
            guard let message = ClientMessage.decode(body) else { return fail(session, .malformed, because: "malformed frame") }
            session.counters.count(message.counterKind)
            handle(message, on: session, mailbox: mailbox)
            dropIfNotReading(session)
        }
    }

    /// A client that sends but never reads piles up answers (pongs, acknowledgements): past
    /// `maxOutputBytes` unread it is closed, so what it costs stays bounded.
    func dropIfNotReading(_ session: Session) {
        guard session.isOpen, session.connection.outboundBytes > configuration.maxOutputBytes else { return }
        fail(session, .timeout, because: "not reading (\(session.connection.outboundBytes) bytes unread)")
    }

    /// Opens a client's sealed frame. Every frame a client seals is one of the wire sizes
    /// (`Padding.wireSizes`, its 4-byte length included): one of another length comes from a
    /// client that does not pad, whose frames would tell the network their lengths, and is
    /// refused before it is opened.
    private func open(_ frame: [UInt8], _ channel: Session.Channel, on session: Session) -> [UInt8]? {
        guard Padding.wireSizes.contains(frame.count + 4) else {
            fail(session, .malformed, because: "a frame of \(frame.count + 4) bytes, not one of the padded sizes")
            return nil
        }
        do {
            return try channel.cipher.open(frame)
        } catch {
            fail(session, .decryptionFailed, because: "frame \(channel.cipher.receivedFrames) failed to decrypt (altered, replayed or reordered)")
            return nil
        }
    }

    private func handleHello(_ frame: [UInt8], on session: Session) {
        if frame.count == RelayHandshake.helloBytes, Array(frame[0..<3]) == RelayProtocol.magic, frame[3] != RelayProtocol.version {
            return fail(session, .unsupportedVersion, because: "hello for protocol version \(frame[3])")
        }
        do {
            let (reply, cipher, transcript) = try RelayHandshake.relayRespond(clientHello: frame, relayStatic: staticKey)
            session.counters.count(FrameCounters.Outbound.hello)
            session.connection.send(reply)
            let challenge = Random.bytes(RelayProtocol.challengeBytes)
            session.phase = .awaitingAuth(Session.Channel(cipher), transcript: transcript, challenge: challenge)
            session.send(.challenge(challenge), kind: .challenge)
        } catch {
            fail(session, .malformed, because: "bad hello (\(frame.count) bytes)")
        }
    }

    private func handleAuth(key: [UInt8], signature: [UInt8], transcript: [UInt8], challenge: [UInt8], channel: Session.Channel,
                            on session: Session) {
        guard Signature.verify(signature, message: RelayHandshake.authMessage(transcript: transcript, challenge: challenge), publicKey: key) else {
            return fail(session, .badSignature, because: "authentication signature does not verify")
        }
        let mailbox = MailboxID(publicKey: key)
        session.phase = .ready(channel, mailbox: mailbox)
        var list = sessionsByMailbox[mailbox, default: []]
        list.append(session)
        sessionsByMailbox[mailbox] = list
        if cluster != nil {
            // The first connection of the mailbox here is welcomed once its reader knows how
            // much is held; another is welcomed now and handed nothing while the first stays.
            if list.count == 1 { return openHandover(for: session, mailbox: mailbox, welcomeOwed: true) }
            return session.send(.welcome(mailbox: mailbox, relayTime: clock.now(), held: 0), kind: .welcome)
        }
        let queue = queues[mailbox]
        session.send(.welcome(mailbox: mailbox, relayTime: clock.now(), held: UInt32(clamping: queue?.liveCount ?? 0)), kind: .welcome)
        if list.count == 1 {
            session.drainedNoticeDue = true
            if let queue {
                queue.restartHandover()
                pump(queue)
            } else {
                session.drainedNoticeDue = false
                session.send(.drained, kind: .drained)
            }
        }
    }

    private func handle(_ message: ClientMessage, on session: Session, mailbox: MailboxID) {
        switch message {
        case .auth:
            fail(session, .malformed, because: "second auth")
        case .present(let codes):
            for code in codes { present(code, by: Pairing.Party(session: session, mailbox: mailbox)) }
        case .registerInvites(let salts):
            // Only tokens derived from this connection's own mailbox: a token read in someone
            // else's contact code cannot be claimed.
            let now = clock.now()
            for salt in salts {
                let token = InviteToken.derived(mailbox: mailbox, salt: salt)
                switch invites.register(token, for: mailbox, from: session.host, now: now, limits: configuration) {
                case .registered(let dropped):
                    recordInvite(token, for: mailbox, refreshed: now)
                    if let dropped { recordInvite(dropped, for: nil, refreshed: now) }
                case .refreshed:
                    recordInvite(token, for: mailbox, refreshed: now)
                case .takenByAnother:
                    // Two mailboxes deriving one 128-bit token: not expected to happen, ever.
                    log.warning("\(session.name): invite token already registered by another mailbox; refused")
                case .hostFull:
                    if session.ignoredInvitesLogged.insert(.hostFull).inserted {
                        log.warning("\(session.name): its host has \(configuration.invitesPerHost) invites registered, its limit; ignored")
                    }
                case .full:
                    if session.ignoredInvitesLogged.insert(.full).inserted {
                        log.warning("\(session.name): invite registry full (\(configuration.maxInvites)); ignored")
                    }
                }
            }
        case .send(let seq, 0, let payload):
            // Cover traffic: held for this mailbox itself, like a frame for an offline peer.
            if cluster != nil {
                return clusterHold(payload, for: mailbox, origin: .own, kind: .conversation, seq: seq, from: session, forwarded: false)
            }
            hold(payload, for: mailbox, origin: origins.retain(.own), seq: seq, from: session, cover: true)
        case .send(let seq, let link, let payload), .sendAhead(let seq, let link, let payload):
            guard let end = session.links[link] else {
                return session.send(.refused(seq: seq, reason: RefusalReason.unknownLink.rawValue), kind: .refused)
            }
            if cluster != nil {
                return clusterHold(payload, for: end.peerMailbox, origin: .link(code: end.code), kind: message.isAhead ? .ahead : .conversation,
                                   seq: seq, from: session, forwarded: end.peer.isLive)
            }
            origins.retain(number: end.outgoingOrigin)
            hold(payload, for: end.peerMailbox, origin: end.outgoingOrigin, seq: seq, from: session, ahead: message.isAhead)
        case .request(let seq, let token, let payload):
            if let cluster {
                // Registered on any node: the bucket knows the owner.
                guard let owner = invites.owner(of: token) else {
                    return cluster.link.lookUpInvite(token, session: session.number, seq: seq, payload: payload)
                }
                return clusterHold(payload, for: owner, origin: .invite(token), kind: .request, seq: seq, from: session, forwarded: false)
            }
            guard let owner = invites.owner(of: token) else {
                return session.send(.refused(seq: seq, reason: RefusalReason.unknownInvite.rawValue), kind: .refused)
            }
            hold(payload, for: owner, origin: origins.retain(.invite(token)), seq: seq, from: session, request: true)
        case .acknowledge(let ids):
            if cluster != nil { return clusterAcknowledge(ids, on: session) }
            guard let mailbox = session.mailbox, sessionsByMailbox[mailbox]?.first === session, let queue = queues[mailbox] else { return }
            for id in ids {
                guard let record = queue.acknowledge(id) else { continue }
                forget(record)
                persistence?.recordDeleted(id: id)
            }
            pump(queue)
        case .ping(let value):
            session.send(.pong(value), kind: .pong)
        case .moveMailbox(let oldKey, let signature):
            let old = MailboxID(publicKey: oldKey), new = mailbox
            guard old != new, Signature.verify(signature, message: MailboxMove.statement(from: old, to: new), publicKey: oldKey) else {
                return fail(session, .badSignature, because: "a mailbox move that does not verify")
            }
            move(old, to: new)
        case .leave(let link):
            leave(link, by: session)
        }
    }

    /// Hands what is held for `old` to `new`, and drops `old`'s invites. The old mailbox is
    /// not closed, refused or redirected: its key may be in a thief's hands too, and a move
    /// must give nobody more than connecting as that mailbox and taking what it holds
    /// already does. (Whoever moves it gets ciphertext only its owner's device can open.)
    /// A client repeats the move at each connection for as long as something may still
    /// arrive for the old mailbox. Moved items get new ids and keep their time; expiry scans
    /// from the front, so one moved behind newer items can outlive 72 h by at most their
    /// difference — they are handed over at once to the connection that asked for the move.
    private func move(_ old: MailboxID, to new: MailboxID) {
        for token in invites.removeAll(of: old) { recordInvite(token, for: nil, refreshed: 0) }
        if cluster != nil { return clusterMove(old, to: new) }
        var moved = 0
        if let from = queues.removeValue(forKey: old) {
            from.restartHandover()
            var records: [(id: HeldItemID, heldAt: Int64, origin: UInt32, payload: [UInt8], request: Bool, sender: UInt32)] = []
            _ = from.expire(heldAtOrBefore: .max) { record in
                records.append((record.id, record.heldAt, record.origin, Array(from.payload(of: record)), record.isRequest, record.sender))
            }
            let to = queue(for: new)
            for record in records {
                let id = nextItemID
                nextItemID += 1
                // Cover of the old mailbox is no cover of the new one: an ordinary item now.
                to.append(id: id, heldAt: record.heldAt, origin: record.origin, payload: record.payload, request: record.request,
                          sender: record.sender)
                if let persistence, let origin = origins.origin(record.origin) {
                    persistence.recordDeleted(id: record.id)
                    persistence.recordHeld(id: id, mailbox: new, heldAt: record.heldAt, origin: origin, payload: record.payload,
                                           sender: shares.senders.origin(record.sender))
                }
            }
            moved = records.count
            pump(to)
        }
        if moved > 0 { log.note("\(moved) held items moved to mailbox \(new)") }
    }

    /// An invite registered, refreshed (`mailbox`) or forgotten (nil): kept by `--persist`
    /// and the cluster's bucket (whose TTL a registration starts again).
    func recordInvite(_ token: InviteToken, for mailbox: MailboxID?, refreshed: Int64) {
        persistence?.recordInvite(token, mailbox: mailbox, refreshed: refreshed)
        cluster?.link.registerInvite(token, for: mailbox)
    }

    /// Invites not registered again within `--invite-expiry` are forgotten; those of
    /// connected mailboxes are refreshed (and so kept) instead.
    func sweepInvites() {
        let swept = invites.sweep(now: clock.now(), expirySeconds: configuration.inviteExpirySeconds) { sessionsByMailbox[$0] != nil }
        let now = clock.now()
        for token in swept.refreshed { recordInvite(token, for: invites.owner(of: token), refreshed: now) }
        for token in swept.expired { recordInvite(token, for: nil, refreshed: now) }
        if !swept.expired.isEmpty { log.note("invite sweep: forgot \(swept.expired.count) invites not registered again within \(configuration.inviteExpirySeconds) s") }
    }

    /// Takes a frame for `mailbox` (its origin already retained): queue it, acknowledge the
    /// sender ("Sent"), and push it on if the mailbox is connected. Over quota (items or
    /// bytes): refuse. Message requests (`request`) have a quota and a rate of their own, so a
    /// flood of them never makes a conversation's frame refused. Cover (`cover`) has a small
    /// allowance of its own. What the sending host and mailbox hold is budgeted too, so no
    /// stranger fills the relay; a frame for a connected recipient that keeps up (less than a
    /// handover window of bytes waiting) is forwarded even when the relay is full.
    private func hold(_ payload: [UInt8], for mailbox: MailboxID, origin: UInt32, seq: UInt64, from sender: Session,
                      ahead: Bool = false, request: Bool = false, cover: Bool = false) {
        let queue = queue(for: mailbox)
        let from = HeldSender(host: sender.host, mailbox: sender.mailbox)
        let live = !cover && sessionsByMailbox[mailbox]?.first?.isOpen == true
            && queue.liveBytes + payload.count <= configuration.handoverWindowBytes
        let refusal: RefusalReason?
        if request ? queue.liveRequests >= configuration.requestQuota : queue.liveConversationCount >= configuration.quota {
            refusal = request ? .requestQuotaExceeded : .quotaExceeded
        } else if !request, queue.liveConversationBytes + payload.count > configuration.quotaBytes {
            refusal = .byteQuotaExceeded
        } else if cover, queue.liveCover >= configuration.coverQuota || queue.liveCoverBytes + payload.count > configuration.coverQuotaBytes {
            refusal = .quotaExceeded
        } else if !shares.admits(payload.count, from: from, limits: configuration) {
            refusal = .relayFull
        } else if !live, totalHeldBytes + payload.count > configuration.maxHeldBytes {
            refusal = .relayFull
        } else if request, !takeRequestToken(for: mailbox) {
            refusal = .requestQuotaExceeded
        } else {
            refusal = nil
        }
        if let refusal {
            origins.release(origin)
            if queue.isEmpty, sessionsByMailbox[mailbox] == nil { queues[mailbox] = nil }
            return sender.send(.refused(seq: seq, reason: refusal.rawValue), kind: .refused)
        }
        let id = nextItemID
        nextItemID += 1
        let heldAt = clock.now()
        queue.append(id: id, heldAt: heldAt, origin: origin, payload: payload, ahead: ahead, request: request, cover: cover,
                     sender: shares.add(payload.count, from: from))
        totalHeldBytes += payload.count
        totalHeldItems += 1
        if let persistence, let o = origins.origin(origin) {
            persistence.recordHeld(id: id, mailbox: mailbox, heldAt: heldAt, origin: o, payload: payload, sender: from)
        }
        let online = sessionsByMailbox[mailbox] != nil
        // Cover to the sender's own mailbox is answered as held, as for an offline peer.
        sender.send(.sent(seq: seq, forwarded: online && origins.origin(origin) != .own), kind: .sent)
        if online { pump(queue) }
    }

    static let handoverPiece = 64 * 1024

    /// Hands the mailbox's connection what it may take now: what was sent ahead (handshakes,
    /// small and few) at once, the rest in order within the window.
    func pump(_ queue: MailboxQueue) {
        guard let session = sessionsByMailbox[queue.mailbox]?.first, session.isOpen else { return }
        while let record = queue.takeAhead() ?? (queue.inFlight.count < configuration.handoverWindow
                                                 && queue.inFlightBytes < configuration.handoverWindowBytes ? queue.takeNext() : nil) {
            guard let origin = origins.origin(record.origin) else { continue }
            let payload = queue.payload(of: record)
            var w = ByteWriter(capacity: 86 + payload.count)
            RelayMessage.writeDeliverHeader(&w, id: record.id, heldAt: record.heldAt,
                                            link: session.linkForOrigin[record.origin] ?? 0, origin: origin)
            w.raw(payload)
            session.sendEncoded(w.bytes, kind: .deliver)
            // A large handover leaves in pieces, so the client opens the first frames while
            // the rest are prepared (a whole window used to wait for the end of the
            // iteration). Not while persistence has uncommitted changes: acknowledgements
            // queued on this connection must not leave before the commit.
            if session.connection.outboundBytes >= Self.handoverPiece, persistence?.hasChanges != true {
                session.connection.flush()
                guard session.isOpen else { return }
            }
        }
        dropIfNotReading(session)
        guard session.isOpen else { return }
        if session.drainedNoticeDue, queue.inFlight.isEmpty, !queue.hasUndelivered {
            session.drainedNoticeDue = false
            session.send(.drained, kind: .drained)
        }
    }

    private func present(_ code: [UInt8], by party: Pairing.Party) {
        let session = party.session
        let fresh = !session.pendingCodes.contains(code)
        switch pairing.present(code, by: party, now: loop.now, mayLink: { mayLink($0, party) }) {
        case .waiting:
            if fresh, cluster != nil { clusterPresented(code, by: session) }
        case .matched(let other):
            link(other, party, code: code)
        case .ignored(let why):
            if session.ignoredCodesLogged.insert(why).inserted { log.warning("\(session.name): codes ignored: \(why)") }
        }
    }

    /// Whether `a` and `b` may be linked now: both have room for another link and both
    /// mailboxes have a link to spend (taken only when both have).
    private func mayLink(_ a: Pairing.Party, _ b: Pairing.Party) -> Bool {
        guard makeRoomForLink(on: a.session), makeRoomForLink(on: b.session) else { return false }
        guard takeLinkToken(for: a.mailbox) else { return false }
        guard takeLinkToken(for: b.mailbox) else {
            linkBudgets[a.mailbox]?.refund()
            return false
        }
        return true
    }

    /// One link from `mailbox`'s budget, if it has one.
    func takeLinkToken(for mailbox: MailboxID) -> Bool {
        let now = loop.now
        var bucket = linkBudgets[mailbox] ?? TokenBucket(capacity: configuration.linkBurst, perSecond: configuration.linksPerSecond, now: now)
        defer { linkBudgets[mailbox] = bucket }
        return bucket.take(now: now)
    }

    /// At its bound of links, a connection forgets those whose peer has left (sends on them
    /// are then refused as an unknown link rather than held); false if that frees nothing.
    func makeRoomForLink(on session: Session) -> Bool {
        guard session.links.count >= configuration.maxLinksPerConnection else { return true }
        for (id, end) in session.links where !end.peer.isLive {
            session.links[id] = nil
            if session.linkForOrigin[end.incomingOrigin] == id { session.linkForOrigin[end.incomingOrigin] = nil }
            origins.release(end.outgoingOrigin)
            origins.release(end.incomingOrigin)
        }
        return session.links.count < configuration.maxLinksPerConnection
    }

    func takeRequestToken(for mailbox: MailboxID) -> Bool {
        let now = loop.now
        // As many as the quota in a burst, refilled at that many per hour.
        var bucket = requestBudgets[mailbox] ?? TokenBucket(capacity: configuration.requestQuota,
                                                            perSecond: Double(configuration.requestQuota) / 3600, now: now)
        defer { requestBudgets[mailbox] = bucket }
        return bucket.take(now: now)
    }

    private func link(_ partyA: Pairing.Party, _ partyB: Pairing.Party, code: [UInt8]) {
        let a = partyA.session, b = partyB.session
        let id = nextLinkID
        nextLinkID = nextLinkID == LinkID.max ? 1 : nextLinkID + 1
        // Both directions share the code's origin: a delivery names the conversation's code,
        // never the mailbox that sent it. Each end holds two references (its outgoing and
        // incoming origin), released when that end closes.
        let fromA = origins.retain(.link(code: code))
        let fromB = origins.retain(.link(code: code))
        origins.retain(number: fromA)
        origins.retain(number: fromB)
        a.links[id] = Session.LinkEnd(code: code, peerMailbox: partyB.mailbox, peer: .here(b), outgoingOrigin: fromA, incomingOrigin: fromB)
        b.links[id] = Session.LinkEnd(code: code, peerMailbox: partyA.mailbox, peer: .here(a), outgoingOrigin: fromB, incomingOrigin: fromA)
        a.linkForOrigin[fromB] = id
        b.linkForOrigin[fromA] = id
        a.send(.linked(link: id, code: code), kind: .linked)
        b.send(.linked(link: id, code: code), kind: .linked)
        // Which two connections (and so mailboxes) a link joins is never logged.
        log.note("made link \(id)")
    }
}

extension DeliveryOrigin {
    /// A message request (sent to an invite token), as opposed to a conversation's frame.
    var isRequest: Bool {
        if case .invite = self { return true }
        return false
    }
}
