import RChatRelayClient

/// Rendezvous codes waiting for their match. A code links two live connections of
/// different mailboxes once and is consumed by it; presenting it again later starts a new
/// wait (a contact who reinstalled meets us on the same day's recovery code). Bounded in
/// all and per connection.
struct Pairing {
    let timeout: Double
    let maxPending: Int
    let maxPerSession: Int
    private(set) var pending: [[UInt8]: (session: Session, expires: Double)] = [:]
    // Expiry in arrival order: every code gets the same timeout, so a FIFO is sorted.
    private var pendingOrder: [(code: [UInt8], expires: Double)] = []
    private var pendingHead = 0

    init(timeout: Double, maxPending: Int, maxPerSession: Int) {
        self.timeout = timeout
        self.maxPending = maxPending
        self.maxPerSession = maxPerSession
    }

    enum Outcome {
        case waiting
        case matched(Session)
        case ignored
    }

    mutating func present(_ code: [UInt8], by session: Session, now: Double) -> Outcome {
        if let waiting = pending[code] {
            if waiting.session === session { return .waiting }
            if waiting.session.isOpen, waiting.session.mailbox != session.mailbox {
                pending[code] = nil
                waiting.session.pendingCodes.remove(code)
                return .matched(waiting.session)
            }
            // The same mailbox on another connection (or a dead one): the newest waits.
            waiting.session.pendingCodes.remove(code)
            pending[code] = nil
        }
        guard pending.count < maxPending, session.pendingCodes.count < maxPerSession else { return .ignored }
        pending[code] = (session, now + timeout)
        pendingOrder.append((code, now + timeout))
        session.pendingCodes.insert(code)
        return .waiting
    }

    mutating func forget(_ session: Session) {
        for code in session.pendingCodes where pending[code]?.session === session { pending[code] = nil }
        session.pendingCodes.removeAll()
    }

    /// Drops codes that waited too long; returns how many.
    @discardableResult
    mutating func expire(now: Double) -> Int {
        var dropped = 0
        while pendingHead < pendingOrder.count, pendingOrder[pendingHead].expires <= now {
            let (code, expires) = pendingOrder[pendingHead]
            pendingHead += 1
            if let p = pending[code], p.expires == expires {
                pending[code] = nil
                p.session.pendingCodes.remove(code)
                dropped += 1
            }
        }
        if pendingHead > 1024, pendingHead * 2 > pendingOrder.count { pendingOrder.removeFirst(pendingHead); pendingHead = 0 }
        return dropped
    }
}
