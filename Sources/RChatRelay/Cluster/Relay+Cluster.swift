import RChatCore
import RChatCrypto
import RChatNet
import RChatWire

/// Cluster mode (`--cluster`): the node keeps no mailbox of its own. Every frame is
/// published to JetStream and acknowledged (`sent`) once JetStream stored it; the node
/// handing a mailbox over reads it from JetStream, oldest first, and deletes a frame once
/// its client acknowledged it. Codes meet their peer on any node through a JetStream
/// bucket, and the two nodes then tell each other about the link over NATS.
extension Relay {
    /// Connects to NATS (one clear line when it cannot), and hooks the cluster into `loop`.
    static func startCluster(_ configuration: RelayConfiguration, relayKey: AgreementKey, loop: EventLoop) throws(StartError) -> ClusterNode {
        let inbox = ClusterInbox(wake: { loop.wake() })
        do {
            let link = try ClusterLink(servers: configuration.clusterServers, configuration: configuration, inbox: inbox,
                                       tallyNamingKey: Hash.deriveKey(from: relayKey.secretKey, context: "rchat relay cluster tallies v1"))
            return ClusterNode(link: link, relayKey: relayKey)
        } catch {
            throw StartError(description: error.description)
        }
    }

    /// Set up once the relay exists: the inbox is emptied at the end of every iteration,
    /// heartbeats go out, silent nodes and unanswered matches are noticed.
    func attachCluster(_ cluster: ClusterNode) {
        loop.addBeforeFlush { [unowned self] in
            for event in cluster.link.inbox.takeAll() { handle(event, cluster) }
        }
        cluster.link.refreshStreamBytes()
        loop.schedule(after: ClusterNode.heartbeatInterval, repeating: true) { [unowned self] in
            cluster.link.heartbeat(NodeMessage.heartbeat(cluster.link.node).encoded())
            cluster.link.refreshStreamBytes()
            noticeSilence(cluster)
            let failed = cluster.link.failedDeletes
            if failed > cluster.failedDeletesLogged {
                log.warning("JetStream did not delete \(failed - cluster.failedDeletesLogged) acknowledged frames; they will be handed over again")
                cluster.failedDeletesLogged = failed
            }
        }
        log.note("cluster node \(cluster.link.node): mailboxes in JetStream stream \(ClusterLink.stream), \(cluster.link.replicas) replicas")
    }

    private func handle(_ event: ClusterEvent, _ cluster: ClusterNode) {
        switch event {
        case .published(let token, let outcome):
            guard let waiting = cluster.answer(for: token) else { return }
            // Counted, then not stored: the mailbox's tally gives it back.
            if case .refused = outcome { cluster.link.tallies.release(waiting.charge, heldAt: waiting.heldAt, keys: waiting.keys) }
            guard let session = sessions[waiting.session], session.isOpen else { return }
            switch outcome {
            case .stored:
                session.send(.sent(seq: waiting.seq, forwarded: waiting.forwarded), kind: .sent)
            case .refused(let reason), .overQuota(let reason):
                session.send(.refused(seq: waiting.seq, reason: reason.rawValue), kind: .refused)
            case .unanswered:
                log.warning("\(session.name): JetStream did not answer a publish within \(ClusterLink.publishWait / 1000) s; the sender will send it again")
            }
        case .readerOpened(let number, let role, let held):
            guard let handover = cluster.handovers[number], let session = sessions[number], let mailbox = session.mailbox else { return }
            switch (role, handover.phase) {
            case (.ahead, .opening(let welcomeOwed, let aheadArrived)):
                if welcomeOwed {
                    session.send(.welcome(mailbox: mailbox, relayTime: clock.now(), held: UInt32(clamping: held.all)), kind: .welcome)
                }
                session.drainedNoticeDue = true
                if held.ahead == 0 || aheadArrived { readEverything(handover, session, cluster) } else { handover.phase = .aheadFirst }
            case (.all, .reading):
                // Its frames may have come first, the last of them saying it caught up.
                if held.all == 0 { handover.phase = .reading(caughtUp: true) }
            default:
                break
            }
            pump(handover, on: session, cluster)
        case .readerFailed(let number, let reason):
            guard let session = sessions[number] else { return }
            fail(session, .internalError, because: reason)
        case .arrived(let number, let role, let arrival):
            // A session that closed closed its readers too: nothing to give back.
            guard let handover = cluster.handovers[number], let session = sessions[number] else { return }
            switch role {
            case .ahead:
                // Once that reader is closed, what it still brought comes again in order.
                guard handover.ahead != nil else { return }
                handover.queuedAhead.append((arrival, .ahead))
                handover.aheadThrough = max(handover.aheadThrough, arrival.sequence)
                if arrival.pendingAfter == 0 {
                    switch handover.phase {
                    case .opening(let welcomeOwed, _): handover.phase = .opening(welcomeOwed: welcomeOwed, aheadArrived: true)
                    case .aheadFirst: readEverything(handover, session, cluster)
                    case .reading: break
                    }
                }
            case .all:
                if arrival.pendingAfter == 0, case .reading = handover.phase { handover.phase = .reading(caughtUp: true) }
                if ClusterNode.parse(subject: arrival.subject)?.0 == .ahead {
                    if arrival.sequence <= handover.aheadThrough {
                        handover.all?.release(arrival.units)   // handed over by the other reader
                    } else {
                        handover.queuedAhead.append((arrival, .all))
                    }
                } else {
                    handover.queued.append(arrival)
                }
            }
            pump(handover, on: session, cluster)
        case .connection(let up):
            cluster.isUp = up
            if up {
                log.note("NATS reachable again: taking frames")
            } else {
                log.warning("NATS unreachable: refusing frames (\(RefusalReason.clusterUnavailable)) until it is back")
            }
        case .node(_, let data):
            guard let message = NodeMessage.decode(data) else { return log.warning("an unreadable frame from another node; ignored") }
            handle(message, cluster)
        case .pairingEntry(let lookup):
            pairingEntry(lookup, cluster)
        case .inviteOwner(let number, let seq, let token, let payload, let owner):
            guard let session = sessions[number], session.isOpen else { return }
            guard let owner else { return session.send(.refused(seq: seq, reason: RefusalReason.unknownInvite.rawValue), kind: .refused) }
            clusterHold(payload, for: owner, origin: .invite(token), kind: .request, seq: seq, from: session, forwarded: false)
        case .moved(let count, let failure):
            if let failure { log.error("mailbox move: \(failure)") } else if count > 0 { log.note("\(count) held items moved to a new mailbox") }
        }
    }

    // MARK: holding

    /// Publishes a frame for `mailbox` once the mailbox's tally across the cluster counted it
    /// (`ClusterTallies`: its bytes, cover and requests bounded as one relay bounds them);
    /// the sender hears `sent` once JetStream stored it. JetStream's per-subject limit is
    /// the item quota. Once the stream holds `--max-held-bytes`, only frames for a
    /// connected recipient (`forwarded`) are taken, into the room kept for them.
    func clusterHold(_ payload: [UInt8], for mailbox: MailboxID, origin: DeliveryOrigin, kind: ClusterNode.Kind, seq: UInt64,
                     from sender: Session, forwarded: Bool) {
        guard let cluster else { return }
        guard cluster.isUp else { return sender.send(.refused(seq: seq, reason: RefusalReason.clusterUnavailable.rawValue), kind: .refused) }
        if !forwarded, cluster.link.streamBytes + payload.count > configuration.maxHeldBytes {
            return sender.send(.refused(seq: seq, reason: RefusalReason.relayFull.rawValue), kind: .refused)
        }
        let heldAt = clock.now()
        let from = HeldSender(host: sender.host, mailbox: sender.mailbox)
        let data = cluster.sealing.seal(kind, mailbox: mailbox, heldAt: heldAt, origin: origin, payload: payload, sender: from)
        let charge = HeldCharge(kind, origin: origin, bytes: payload.count)
        let keys = TallyKey.keys(recipient: mailbox, sender: from)
        let token = cluster.register(.init(session: sender.number, seq: seq, forwarded: forwarded, charge: charge, heldAt: heldAt, keys: keys))
        cluster.link.tallies.hold(.init(charge: charge, heldAt: heldAt, keys: keys, live: forwarded, subject: ClusterNode.subject(kind, mailbox),
                                        data: data, token: token))
    }

    // MARK: handing over

    /// The first session of a mailbox on this node is handed its frames: a reader starts.
    func openHandover(for session: Session, mailbox: MailboxID, welcomeOwed: Bool) {
        guard let cluster else { return }
        let ahead = cluster.link.openReader(for: mailbox, role: .ahead, session: session.number, budget: readerBudget)
        cluster.handovers[session.number] = ClusterHandover(ahead: ahead, mailbox: mailbox, welcomeOwed: welcomeOwed)
    }

    /// What a reader may bring before the client acknowledges: the handover window in
    /// frames and in KiB (`MailboxReader.cost`), so a few MiB at most.
    private var readerBudget: Int { configuration.handoverWindow + configuration.handoverWindowBytes / 1024 }

    /// What was sent ahead is handed over: its reader stops, the reader of everything starts.
    private func readEverything(_ handover: ClusterHandover, _ session: Session, _ cluster: ClusterNode) {
        if let ahead = handover.ahead {
            cluster.link.closeReader(ahead)
            handover.ahead = nil
        }
        handover.phase = .reading(caughtUp: false)
        handover.all = cluster.link.openReader(for: handover.mailbox, role: .all, session: session.number, budget: readerBudget)
    }

    func closeHandover(of session: Session) {
        guard let cluster, let handover = cluster.handovers.removeValue(forKey: session.number) else { return }
        handover.quiet?.broken()
        if let ahead = handover.ahead { cluster.link.closeReader(ahead) }
        if let all = handover.all { cluster.link.closeReader(all) }
    }

    func clusterAcknowledge(_ ids: [HeldItemID], on session: Session) {
        guard let cluster, let handover = cluster.handovers[session.number] else { return }
        for id in ids {
            guard let (bytes, role, units, counted) = handover.inFlight.removeValue(forKey: id) else { continue }
            handover.inFlightBytes -= bytes
            cluster.link.delete(sequence: id)
            cluster.link.tallies.release(counted.charge, heldAt: counted.heldAt, keys: counted.keys)
            handover.reader(role)?.release(units)
        }
        pump(handover, on: session, cluster)
    }

    private func pump(_ handover: ClusterHandover, on session: Session, _ cluster: ClusterNode) {
        // Frames can come before the news that their reader was made: they wait for the
        // welcome, which goes first.
        guard session.isOpen else { return }
        if case .opening = handover.phase { return }
        while handover.inFlightBytes < configuration.handoverWindowBytes, let (arrival, role) = handover.next() {
            guard let (kind, mailbox) = ClusterNode.parse(subject: arrival.subject), mailbox == handover.mailbox,
                  let (heldAt, origin, payload, from) = cluster.sealing.open(arrival.data, kind: kind, mailbox: mailbox) else {
                // Not sealed with this node's key for this mailbox (a node started with another
                // key file?): never handed on, and not deleted either — it may be another's
                // to read; it expires with the hold.
                log.warning("held frame \(arrival.sequence) does not open with this node's key; skipped")
                handover.reader(role)?.release(arrival.units)
                continue
            }
            if handover.inFlight[arrival.sequence] != nil {
                handover.reader(role)?.release(arrival.units)
                continue
            }
            // A frame sealed before senders were kept counts for its recipient only.
            let counted = ClusterHandover.Counted(charge: HeldCharge(kind, origin: origin, bytes: payload.count), heldAt: heldAt,
                                                  keys: TallyKey.keys(recipient: mailbox, sender: from ?? HeldSender(host: nil, mailbox: nil)))
            handover.quiet?.broken()
            handover.quiet = nil
            handover.inFlight[arrival.sequence] = (payload.count, role, arrival.units, counted)
            handover.inFlightBytes += payload.count
            let number = origins.retain(origin)
            var w = ByteWriter(capacity: 86 + payload.count)
            RelayMessage.writeDeliverHeader(&w, id: arrival.sequence, heldAt: heldAt, link: session.linkForOrigin[number] ?? 0, origin: origin)
            origins.release(number)
            w.raw(payload)
            session.sendEncoded(w.bytes, kind: .deliver)
            if session.connection.outboundBytes >= Self.handoverPiece {
                session.connection.flush()
                guard session.isOpen else { return }
            }
        }
        dropIfNotReading(session)
        guard session.isOpen else { return }
        if session.drainedNoticeDue, case .reading(caughtUp: true) = handover.phase, handover.inFlight.isEmpty, !handover.hasQueued {
            session.drainedNoticeDue = false
            session.send(.drained, kind: .drained)
            // Everything it held was handed over and acknowledged: it holds nothing now, and
            // what a failure left counted stops counting if nothing more comes a while.
            let mark = ClusterTallies.QuietMark()
            handover.quiet = mark
            cluster.link.tallies.settle(handover.mailbox, mark: mark)
        }
    }

    /// What is held for `old` is published again for `new` (re-sealed for it), then
    /// deleted; the new mailbox's reader hands it over as it arrives.
    func clusterMove(_ old: MailboxID, to new: MailboxID) {
        guard let cluster else { return }
        let sealing = cluster.sealing
        cluster.link.move(from: old) { subject, data in
            guard let (kind, mailbox) = ClusterNode.parse(subject: subject), mailbox == old,
                  let (heldAt, origin, payload, sender) = sealing.open(data, kind: kind, mailbox: old) else { return nil }
            return (ClusterNode.subject(kind, new), sealing.seal(kind, mailbox: new, heldAt: heldAt, origin: origin, payload: payload, sender: sender))
        }
    }

    // MARK: pairing across nodes

    /// A code this node's session waits with is written to the pairing bucket, so that its
    /// peer finds it from any node.
    func clusterPresented(_ code: [UInt8], by session: Session) {
        cluster?.link.presentCode(code, session: session.number)
    }

    private func pairingEntry(_ lookup: PairingLookup, _ cluster: ClusterNode) {
        guard let session = sessions[lookup.session], session.isOpen, let mailbox = session.mailbox,
              session.pendingCodes.contains(lookup.code) else { return }
        switch lookup.entry {
        case .created:
            break
        case .waiting(let node, let other, let revision):
            if node == cluster.link.node {
                // This node's own entry for a session that no longer waits: taken over.
                cluster.link.presentCode(lookup.code, session: session.number, takingOverRevision: revision)
                return
            }
            cluster.matches[.init(session: session.number, code: lookup.code)] =
                .init(node: node, revision: revision, deadline: loop.now + ClusterNode.matchTimeout)
            cluster.link.send(toNode: node, NodeMessage.match(code: lookup.code, waiting: other, from: cluster.link.node,
                                                              session: session.number, mailbox: mailbox).encoded())
        case .failed(let reason):
            log.warning("\(session.name): a code could not be shared with the cluster: \(reason)")
        }
    }

    private func handle(_ message: NodeMessage, _ cluster: ClusterNode) {
        switch message {
        case .heartbeat(let node):
            if node != cluster.link.node { cluster.lastHeard[node] = loop.now }
        case .match(let code, let waiting, let node, let other, let otherMailbox):
            cluster.lastHeard[node] = loop.now
            guard let session = sessions[waiting], session.isOpen, let mailbox = session.mailbox, pairing.isWaiting(code, session) else {
                return cluster.link.send(toNode: node, NodeMessage.refused(code: code, to: other, reason: .notWaiting).encoded())
            }
            guard mayLinkHere(session, mailbox) else {
                return cluster.link.send(toNode: node, NodeMessage.refused(code: code, to: other, reason: .linkBound).encoded())
            }
            pairing.withdraw(code, of: Pairing.Party(session: session, mailbox: mailbox))
            linkElsewhere(session, code: code, node: node, peer: other, peerMailbox: otherMailbox)
            cluster.link.send(toNode: node, NodeMessage.linked(code: code, to: other, from: cluster.link.node, session: session.number,
                                                               mailbox: mailbox).encoded())
            cluster.link.forgetCode(code)
        case .linked(let code, let to, let node, let other, let otherMailbox):
            cluster.lastHeard[node] = loop.now
            cluster.matches[.init(session: to, code: code)] = nil
            guard let session = sessions[to], session.isOpen, let mailbox = session.mailbox, pairing.isWaiting(code, session),
                  mayLinkHere(session, mailbox) else {
                return cluster.link.send(toNode: node, NodeMessage.gone(code: code, to: other, from: cluster.link.node, session: to).encoded())
            }
            pairing.withdraw(code, of: Pairing.Party(session: session, mailbox: mailbox))
            linkElsewhere(session, code: code, node: node, peer: other, peerMailbox: otherMailbox)
        case .refused(let code, let to, let reason):
            guard let match = cluster.matches.removeValue(forKey: .init(session: to, code: code)),
                  let session = sessions[to], session.isOpen, pairing.isWaiting(code, session) else { return }
            switch reason {
            case .notWaiting:
                // The entry named a session that left: this one waits in its place.
                cluster.link.presentCode(code, session: to, takingOverRevision: match.revision)
            case .linkBound:
                if session.ignoredCodesLogged.insert(.linkBound).inserted { log.warning("\(session.name): codes ignored: \(Pairing.Ignored.linkBound)") }
            }
        case .gone(let code, let to, let node, let other):
            guard let session = sessions[to] else { return }
            for (id, end) in session.links where end.code == code {
                guard case .elsewhere(let n, let s) = end.peer, n == node, s == other else { continue }
                session.links[id]?.peer = .gone
                session.send(.peerGone(link: id), kind: .peerGone)
            }
        }
    }

    /// Whether `session` may take one more link now (its room, its mailbox's budget).
    private func mayLinkHere(_ session: Session, _ mailbox: MailboxID) -> Bool {
        guard makeRoomForLink(on: session) else { return false }
        return takeLinkToken(for: mailbox)
    }

    /// This node's end of a link whose other end is a session of another node.
    private func linkElsewhere(_ session: Session, code: [UInt8], node: ClusterNodeID, peer: Int, peerMailbox: MailboxID) {
        let id = nextLinkID
        nextLinkID = nextLinkID == LinkID.max ? 1 : nextLinkID + 1
        let outgoing = origins.retain(.link(code: code))
        let incoming = origins.retain(.link(code: code))
        session.links[id] = Session.LinkEnd(code: code, peerMailbox: peerMailbox, peer: .elsewhere(node: node, session: peer),
                                            outgoingOrigin: outgoing, incomingOrigin: incoming)
        session.linkForOrigin[incoming] = id
        session.send(.linked(link: id, code: code), kind: .linked)
        cluster?.lastHeard[node] = cluster?.lastHeard[node] ?? loop.now
        log.note("made link \(id) across nodes")
    }

    /// Nodes silent for `nodeSilence` are gone: links to their sessions are given up (the
    /// clients there reconnect elsewhere and pair again), and matches waiting on a node that
    /// did not answer take the code's entry over.
    private func noticeSilence(_ cluster: ClusterNode) {
        let now = loop.now
        let silent = Set(cluster.lastHeard.filter { now - $0.value > ClusterNode.nodeSilence }.keys)
        if !silent.isEmpty {
            for node in silent {
                cluster.lastHeard[node] = nil
                log.warning("cluster node \(node) is silent: its links are given up")
            }
            for session in sessions.values where session.isOpen {
                for (id, end) in session.links {
                    guard case .elsewhere(let node, _) = end.peer, silent.contains(node) else { continue }
                    session.links[id]?.peer = .gone
                    session.send(.peerGone(link: id), kind: .peerGone)
                }
            }
        }
        for (key, match) in cluster.matches where match.deadline <= now {
            cluster.matches[key] = nil
            guard let session = sessions[key.session], session.isOpen, pairing.isWaiting(key.code, session) else { continue }
            cluster.link.presentCode(key.code, session: key.session, takingOverRevision: match.revision)
        }
    }
}
