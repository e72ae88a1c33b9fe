import RChatCore
import RChatStore

/// A component's timed work: when it is next due on the engine's monotonic clock (infinity:
/// not), and what it does then (nothing, for a deadline whose work runs at every turn anyway:
/// the deadline only wakes the engine for it).
struct EngineTimer: Sendable {
    let name: String
    let due: @Sendable (Engine) -> Double
    let fire: (@Sendable (Engine) throws(EngineError) -> Void)?

    init(_ name: String, due: @escaping @Sendable (Engine) -> Double, fire: (@Sendable (Engine) throws(EngineError) -> Void)? = nil) {
        self.name = name
        self.due = due
        self.fire = fire
    }
}

extension Engine {
    /// Every component's timed work, in the order a turn runs what is due: `nextTimer` is the
    /// earliest `due` among them and `runTimers` fires each that is due, from this one table,
    /// so that a deadline and the work it wakes the engine for cannot drift apart (as the
    /// scheduled tasks of swift-nio's event loop). Work that runs at every turn (steady
    /// traffic's slots, connecting where needed, the turn's-end listener) is here for its
    /// deadline only.
    static let timers: [EngineTimer] = [
        EngineTimer("receipts", due: { $0.receipts.nextDeadline }, fire: { e throws(EngineError) in try e.receipts.flush(context: e) }),
        EngineTimer("steady traffic", due: { $0.nextSteadyTraffic }),
        EngineTimer("disappearing messages", due: { $0.expiry.nextDeadline(ticks: $0.ticks, nowMilliseconds: $0.clock.nowMilliseconds()) },
                    fire: { e throws(EngineError) in if e.expiry.isDue(now: e.now) { try e.deleteExpiredMessages() } }),
        EngineTimer("link frames sent again", due: { $0.channels.nextControlRetry },
                    fire: { e throws(EngineError) in e.sendControlFramesAgain() }),
        EngineTimer("acknowledgements overdue", due: { $0.channels.nextAcknowledgement },
                    fire: { e throws(EngineError) in try e.acknowledgementsOverdue() }),
        EngineTimer("presentations", due: { $0.connections.nextPresentation }, fire: { e throws(EngineError) in e.presentAgain() }),
        EngineTimer("recovery codes", due: { $0.channels.nextRecoveryCode }, fire: { e throws(EngineError) in e.addRecoveryCodes() }),
        EngineTimer("pings", due: { $0.connections.nextPing }, fire: { e throws(EngineError) in e.ping() }),
        EngineTimer("file windows", due: { $0.channels.nextWindowReopening },
                    fire: { e throws(EngineError) in try e.reopenFileWindows() }),
        EngineTimer("outbox backoffs", due: { $0.outbox.nextDeadline(pending: $0.channels.anyBackoffPending) },
                    fire: { e throws(EngineError) in try e.sweepOutbox() }),
        EngineTimer("store look", due: { $0.policy.followsStore ? $0.storeWatch.nextDeadline : .infinity },
                    fire: { e throws(EngineError) in try e.lookAtStoreIfChanged() }),
        EngineTimer("reconnections", due: { $0.connections.nextAttempt }),
        EngineTimer("turn's end", due: { $0.onTurnEndDeadline?() ?? .infinity }),
        EngineTimer("used keys erased", due: { $0.commits.erasure.due }, fire: { e throws(EngineError) in try e.eraseUsedKeys() }),
    ]

    /// When the next timer is due (infinity: none): the engine sleeps until then unless an
    /// event comes first.
    func nextTimer() -> Double {
        Self.timers.reduce(.infinity) { min($0, $1.due(self)) }
    }

    /// Fires every timer that is due, in the table's order.
    func runTimers() throws(EngineError) {
        thread.check()
        try keepSteadyTraffic()
        for timer in Self.timers {
            guard let fire = timer.fire, timer.due(self) <= ticks else { continue }
            try fire(self)
        }
    }

    // MARK: what the timers do

    /// The sessions whose ratchet moved since they were stored (a frame sent; a dummy taken)
    /// are stored, then the WAL is truncated: no sealed state from before a key was used
    /// stays in the files (`KeyErasure`). A checkpoint that a reader elsewhere holds up
    /// finishes at the next quiet moment.
    func eraseUsedKeys() throws(EngineError) {
        let moved = channels.values.filter { $0.saved?.unsaved == true }
        try AccountService.wrap {
            if !moved.isEmpty { try store.transaction { tx in for channel in moved { try persist(channel, tx) } } }
            try store.truncateLog()
        }
        commits.erasure.done()
    }

    /// Link frames not answered in time go again, on the link they were meant for only (a
    /// new link starts its own handshake).
    func sendControlFramesAgain() {
        let now = ticks
        for channel in channels.values where channel.controlRetries.contains(where: { $0.at <= now }) {
            let due = channel.controlRetries.filter { $0.at <= now }
            channel.controlRetries.removeAll { $0.at <= now }
            let link = channel.linkState.link
            for retry in due where retry.link == link?.id && retry.generation == link?.generation {
                do {
                    try sendOnLink(channel, retry.frame, as: .control(channel.contact.id, retry.frame))
                } catch {
                    log("cannot send to \(channel.contact.name) again: \(error)")
                }
            }
        }
    }

    /// Overdue relay acknowledgements: Not confirmed (a later acknowledgement still makes it Sent).
    func acknowledgementsOverdue() throws(EngineError) {
        let now = ticks
        var events: [ChatEvent] = []
        for channel in channels.values {
            let overdue = channel.takeOverdueAcknowledgements(at: now)
            guard !overdue.isEmpty else { continue }
            acknowledgementOverdue(on: channel.relay)
            try AccountService.wrap {
                try store.transaction { tx in
                    for row in overdue {
                        if let change = try tx.raiseStatus(message: row, event: .acknowledgementTimedOut, at: self.now), change.changed {
                            events.append(.statusChanged(conversation: channel.directConversation, id: change.id, status: change.current))
                        }
                    }
                }
            }
        }
        for event in events { emit(event) }
    }

    /// Channels whose contact is away on a live relay present their codes again.
    func presentAgain() {
        let now = ticks
        for connection in connections.values where connection.client != nil && connection.presentAgainAt <= now {
            connection.presentAgainAt = now + Self.presentAgainSeconds
            for channel in channels.values
            where channel.relay == connection.address && (channel.linkState.link?.peerGone ?? true) {
                present(channel)
            }
        }
    }

    /// A recovery code whose time came is listened on (presented) if the contact is away.
    func addRecoveryCodes() {
        let now = ticks
        for channel in channels.values {
            guard case .due(let at) = channel.recoveryCode, at <= now else { continue }
            if channel.linkState.link?.peerGone ?? true {
                channel.recoveryCode = .listening
                present(channel)
            } else {
                channel.recoveryCode = .notYet
            }
        }
    }

    func ping() {
        let now = ticks
        for connection in connections.values where connection.keepaliveAt <= now {
            connection.keepaliveAt = now + connections.keepaliveSeconds
            do { try connection.client?.ping() } catch { log("cannot ping the relay: \(error)") }
        }
    }

    /// Files held a window ahead of a receiver that stopped reporting: the rest goes now.
    func reopenFileWindows() throws(EngineError) {
        let now = ticks
        for channel in channels.values {
            guard let at = channel.windowReopensAt, at <= now else { continue }
            channel.windowReopensAt = nil
            try flushOutbox(channel)
        }
    }

    /// Retries whose backoff has passed (only where a refusal postponed something: reading a
    /// long outbox every second cost the sender a quarter of its time).
    func sweepOutbox() throws(EngineError) {
        guard outbox.sweepDue(at: ticks) else { return }
        for channel in channels.values where channel.backoffPending { try flushOutbox(channel) }
    }
}
