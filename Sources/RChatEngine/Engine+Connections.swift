import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import RChatStore

extension Engine {
    /// The relays this account uses: its own (for its invites and mailbox), each
    /// conversation's host, and each contact's own (for message requests).
    var neededRelays: Set<RelayAddress> {
        var relays: Set<RelayAddress> = [identity.relay]
        for channel in channels.values where channel.isReachable {
            relays.insert(channel.relay)
            if let address = channel.contactRelay { relays.insert(address) }
        }
        return relays
    }

    /// Starts a connection attempt, off the engine thread, to every needed relay that has
    /// none and whose retry time has come.
    func connectWhereNeeded() {
        for address in neededRelays {
            let connection = connections[address] ?? {
                let c = RelayConnection(address: address)
                connections[address] = c
                return c
            }()
            guard connection.client == nil, !connection.connecting, connection.retryAt <= ticks else { continue }
            connection.connecting = true
            connection.generation += 1
            connection.early.removeAll()
            let generation = connection.generation
            let inbox = self.inbox
            let keyring = channels.keyring
            environment.dialer.dial(address, mailboxKey: identity.mailboxKey, stallTimeout: connections.stallSeconds, events: { event in
                if case .delivery(let delivery) = event {
                    inbox.post(.delivery(address, generation: generation, Inbound(delivery, opened: keyring.open(delivery))))
                } else {
                    inbox.post(.relay(address, generation: generation, event))
                }
            }, writable: {
                inbox.post(.writable(address, generation: generation))
            }, done: { result in
                switch result {
                case .success(let link): inbox.post(.connected(address, generation: generation, link))
                case .failure(let error): inbox.post(.connectFailed(address, generation: generation, "\(error)"))
                }
            })
        }
    }

    func connected(_ address: RelayAddress, _ generation: UInt64, _ client: any RelayLink) throws(EngineError) {
        guard let connection = connections[address], connection.generation == generation else {
            client.close()
            return
        }
        connection.connecting = false
        connection.failures = 0
        connection.client = client
        connection.acknowledgementsOverdue = false
        connection.keepaliveAt = ticks + connections.keepaliveSeconds
        connection.presentAgainAt = ticks + Self.presentAgainSeconds
        log("connected to relay \(address.host):\(address.port)")
        emit(.connectionChanged(.online))
        if let moved = identity.movedFrom, moved.mayStillHoldItems(now: now) {
            do { try client.moveMailbox(from: moved.key) } catch { log("cannot move the previous mailbox: \(error)") }
        }
        if policy.pairs, address == identity.relay {
            do { try client.registerInvites(salts: [identity.inviteSalt]) } catch { log("cannot register the invite: \(error)") }
        }
        for channel in channels.values where channel.relay == address {
            channel.recoveryCode = .notYet
            present(channel)
        }
        let early = connection.early
        connection.early.removeAll()
        for event in early {
            do {
                switch event {
                case .delivery(let d): try handleDeliveries([(connection, Inbound(d, opened: nil))])
                case .sent, .refused: try handleAnswers([(connection, event)])
                default: try handle(event, on: connection)
                }
            } catch {
                // A store that cannot take the batch stops the engine as any other batch does
                // (nothing of it was acknowledged); only a bad event is logged and skipped.
                if error.stopsTheEngine { throw error }
                log("\(error)")
            }
        }
        for channel in channels.values { _ = try? flushOutbox(channel) }
    }

    func connectFailed(_ address: RelayAddress, _ generation: UInt64, _ reason: String) {
        guard let connection = connections[address], connection.generation == generation else { return }
        connection.connecting = false
        if connection.failures == 0 { log("relay \(address.host):\(address.port): \(reason)") }
        connection.scheduleRetry(now: ticks, reconnects: policy.reconnects)
        emit(.connectionChanged(.offline(retryIn: connection.retryIn(now: ticks))))
    }

    /// `/reconnect`: every offline relay is tried now, its backoff forgotten; a connection
    /// whose relay left an acknowledgement overdue is given up and made again (what it did
    /// not acknowledge goes again on the new one).
    func reconnectNow() {
        thread.check()
        var retried = false
        for connection in connections.values where connection.acknowledgementsOverdue {
            connection.client?.close()
            connectionClosed(connection, nil)
        }
        for connection in connections.values where connection.client == nil && !connection.connecting {
            connection.retryNow()
            retried = true
        }
        log("reconnecting now, as asked")
        if retried { emit(.connectionChanged(.connecting)) }
        connectWhereNeeded()
    }

    /// An acknowledgement the relay owes went overdue: while connected, it shows as stalled
    /// (once, until it answers again or the connection ends).
    func acknowledgementOverdue(on address: RelayAddress) {
        guard let connection = connections[address], connection.client != nil, !connection.acknowledgementsOverdue else { return }
        connection.acknowledgementsOverdue = true
        log("relay \(address.host):\(address.port) left an acknowledgement overdue")
        emit(.connectionChanged(.stalled))
    }

    /// The relay answered: a connection shown as stalled is online again.
    func answersFlow(on connection: RelayConnection) {
        guard connection.acknowledgementsOverdue, connection.client != nil else { return }
        connection.acknowledgementsOverdue = false
        emit(.connectionChanged(.online))
    }

    /// A relay that was slow to read took its backlog: what waited for room goes now.
    func backlogDrained(_ connection: RelayConnection) throws(EngineError) {
        for channel in channels.values
        where channel.relay == connection.address || channel.contactRelay == connection.address {
            try flushOutbox(channel)
        }
        receipts.schedule(urgent: true, context: self)
    }

    /// Link events and the end of a connection.
    func handle(_ event: RelayEvent, on connection: RelayConnection) throws(EngineError) {
        thread.check()
        switch event {
        case let .linked(link, code):
            if let id = channels.rotationCodes.removeValue(forKey: HashedBytes(code)), let channel = channels[id], !channel.contact.rotationAcknowledged {
                // They speak under our new key: they accepted it (their word of it was lost).
                log("\(channel.contact.name) took our new key (a link under it)")
                try AccountService.wrap { try store.setRotationAcknowledged(contact: id, true) }
                try rebuild(id)
                // The code is the new conversation's now, whichever of its codes it was.
                channels.codeIndex[HashedBytes(code)] = id
            }
            guard let id = channels.codeIndex[HashedBytes(code)], let channel = channels[id], channel.isReachable else { return }
            linked(channel, link: link, code: code, on: connection)
        case .peerGone(let link):
            let gone = ConversationLink.Event.peerGone(link: link, generation: connection.generation)
            guard let channel = channels.values.first(where: {
                $0.relay == connection.address && $0.linkState.link.map { $0.id == link && $0.generation == connection.generation } == true
            }) else { return }
            // Frames sent on the link are now held for the peer; the session stays usable.
            // Fresh codes let the peer find us again when it comes back.
            channel.apply(gone, at: now)
            present(channel)
            // A file no longer waits a window ahead of the receiver's reports: the relay
            // holds the rest for it (within its quota).
            try flushOutbox(channel)
        case .closed(let error):
            connectionClosed(connection, error)
        case .delivery, .sent, .refused:
            break // batched by the caller
        case .drained:
            connections.drained.insert(connection.address)
        case .pong:
            answersFlow(on: connection)
        }
    }

    func connectionClosed(_ connection: RelayConnection, _ error: RelayClientError?) {
        connection.client = nil
        connection.coverAt = .infinity
        connection.requests.removeAll()
        connection.acknowledgementsOverdue = false
        connection.scheduleRetry(now: ticks, reconnects: policy.reconnects)
        log("relay \(connection.address.host):\(connection.address.port) closed: \(error?.description ?? "by this side")")
        emit(.connectionChanged(.offline(retryIn: connection.retryIn(now: ticks))))
        let t = now
        let ended = channels.values.filter { $0.relay == connection.address && $0.linkState.link != nil }
        for channel in ended { channel.dropLink(at: t) }
        _ = try? AccountService.wrap {
            try store.transaction { tx in for c in ended { try persist(c, tx) } }
        }
    }

    /// Two connections met on a code: set up a fresh session on the link.
    func linked(_ channel: PairwiseChannel, link: LinkID, code: [UInt8], on connection: RelayConnection) {
        // Several codes of one presentation can match at once: the first is kept while its
        // peer is there (`LinkState`). When the peer came back on this connection, the current
        // session (if any) keeps carrying frames on the new link until the new handshake
        // completes: if the peer leaves mid-handshake, what we send is still held for it,
        // readable with the keys it saved.
        let side: ConversationLink.Side = channel.role == .initiator ? .initiator : .responder
        let peerLink = PeerLink(id: link, generation: connection.generation, code: code)
        guard case .success = channel.apply(.linked(peerLink, as: side), at: now) else { return }
        channel.recoveryCode = .notYet
        guard side == .initiator else { return }
        do {
            let initiator = try Handshake.Initiator(
                me: channel.me, peer: .init(accountKey: channel.contact.accountKey, deviceKey: channel.contact.deviceKey),
                reconnectCounter: channel.saved?.reconnectCounter, prologue: Handshake.linkPrologue(code: code))
            channel.apply(.initiated(initiator), at: now)
            let first = LinkFrame.handshakeFirst(initiator.firstMessage())
            try sendOnLink(channel, first, as: .control(channel.contact.id, first))
        } catch {
            log("cannot start a session with \(channel.contact.name): \(error)")
        }
    }

    /// Sends a frame on the conversation's link; returns the relay's sequence number.
    @discardableResult
    func sendOnLink(_ channel: PairwiseChannel, _ frame: LinkFrame, as what: RelayCompletion,
                    flush: Bool = true) throws -> UInt64 {
        guard let link = channel.linkState.link, let connection = connections[channel.relay],
              connection.generation == link.generation, let client = connection.client
        else { throw EngineError.io("no link to \(channel.contact.name)") }
        // A handshake goes ahead of what the peer's mailbox holds: behind a long backlog the
        // session, and with it every receipt, would wait for the whole backlog.
        let seq = try client.send(on: link.id, frame.encoded, ahead: frame.isHandshake, flush: flush)
        connection.requests.register(seq, what)
        // A real frame fills the steady pace's slot: no dummy in it.
        if !what.recordsNothing { channel.pace.used() }
        return seq
    }
}
