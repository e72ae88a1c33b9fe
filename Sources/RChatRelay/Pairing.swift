import RChatWire

/// Rendezvous codes waiting for their match. A code links two live connections of
/// different mailboxes once and leaves the table as it matches; presenting it again later
/// starts a new wait (a contact who reinstalled meets us on the same day's recovery code).
///
/// Bounded per connection and per mailbox, not in all: the table never holds more than
/// the connections' shares together, so a client that fills its share (or a host that
/// fills every connection it may open) never keeps another pair from waiting.
struct Pairing {
    let timeout: Double
    let maxPerSession: Int
    let maxPerMailbox: Int
    private(set) var pending: [[UInt8]: (party: Party, expires: Double)] = [:]
    private(set) var pendingByMailbox: [MailboxID: Int] = [:]
    // Expiry in arrival order: every code gets the same timeout, so a FIFO is sorted.
    private var pendingOrder: [(code: [UInt8], expires: Double)] = []
    private var pendingHead = 0

    init(timeout: Double, maxPerSession: Int, maxPerMailbox: Int) {
        self.timeout = timeout
        self.maxPerSession = maxPerSession
        self.maxPerMailbox = maxPerMailbox
    }

    /// A connection that proved its mailbox, with that mailbox.
    struct Party {
        let session: Session
        let mailbox: MailboxID
    }

    enum Outcome {
        case waiting
        case matched(Party)
        case ignored(Ignored)
    }

    /// Why a presented code was dropped.
    enum Ignored: Hashable, CustomStringConvertible {
        case connectionShare, mailboxShare, linkBound

        var description: String {
            switch self {
            case .connectionShare: return "its connection has its share of codes waiting"
            case .mailboxShare: return "its mailbox has its share of codes waiting"
            case .linkBound: return "a mailbox made links faster than the relay allows, or a connection has its bound of links"
            }
        }
    }

    /// `mayLink` is asked before a match is made (the link budget of both mailboxes); when
    /// it says no, the code waiting stays and the new one is ignored.
    mutating func present(_ code: [UInt8], by party: Party, now: Double,
                          mayLink: (_ waiting: Party) -> Bool) -> Outcome {
        let session = party.session, mailbox = party.mailbox
        if let waiting = pending[code]?.party {
            if waiting.session === session { return .waiting }
            if waiting.session.isOpen, waiting.mailbox != mailbox {
                guard mayLink(waiting) else { return .ignored(.linkBound) }
                remove(code, of: waiting)
                return .matched(waiting)
            }
            // The same mailbox on another connection (or a dead one): the newest waits.
            remove(code, of: waiting)
        }
        guard session.pendingCodes.count < maxPerSession else { return .ignored(.connectionShare) }
        guard pendingByMailbox[mailbox, default: 0] < maxPerMailbox else { return .ignored(.mailboxShare) }
        pending[code] = (party, now + timeout)
        pendingByMailbox[mailbox, default: 0] += 1
        pendingOrder.append((code, now + timeout))
        session.pendingCodes.insert(code)
        return .waiting
    }

    /// Whether `session` waits with `code` (on a cluster node, the other node's session may
    /// be its match).
    func isWaiting(_ code: [UInt8], _ session: Session) -> Bool { pending[code]?.party.session === session }

    /// Takes a waiting code out of the table: it matched a session on another node.
    mutating func withdraw(_ code: [UInt8], of party: Party) {
        guard isWaiting(code, party.session) else { return }
        remove(code, of: party)
    }

    private mutating func remove(_ code: [UInt8], of party: Party) {
        pending[code] = nil
        party.session.pendingCodes.remove(code)
        let left = pendingByMailbox[party.mailbox, default: 1] - 1
        pendingByMailbox[party.mailbox] = left > 0 ? left : nil
    }

    mutating func forget(_ session: Session) {
        for code in session.pendingCodes {
            if let waiting = pending[code]?.party, waiting.session === session { remove(code, of: waiting) }
        }
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
                remove(code, of: p.party)
                dropped += 1
            }
        }
        // Entries of codes that matched or whose connection closed stay in the FIFO until
        // their time; once they are most of it, it is rebuilt from what still waits, so
        // what a closed abuser presented is freed now rather than at its expiry.
        if pendingOrder.count - pendingHead > 2 * pending.count + 1024 {
            pendingOrder = pendingOrder[pendingHead...].filter { pending[$0.code]?.expires == $0.expires }
            pendingHead = 0
        } else if pendingHead > 1024, pendingHead * 2 > pendingOrder.count {
            pendingOrder.removeFirst(pendingHead)
            pendingHead = 0
        }
        // A dictionary keeps its largest size: after a flood, the tables are made anew.
        if pending.capacity > 4096, pending.count * 8 < pending.capacity { pending = pending.filter { _ in true } }
        if pendingByMailbox.capacity > 4096, pendingByMailbox.count * 8 < pendingByMailbox.capacity {
            pendingByMailbox = pendingByMailbox.filter { _ in true }
        }
        return dropped
    }
}
