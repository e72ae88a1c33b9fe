import RChatCore
import RChatCrypto
import RChatWire

/// A relay node's cluster state, confined to the loop's thread like the rest of `Relay`:
/// sends waiting for JetStream's answer, the mailboxes this node is handing over, pairings
/// waiting for another node, and when each other node was last heard of.
final class ClusterNode {
    let link: ClusterLink
    /// Whether NATS is reachable: while it is not, sends are refused (`clusterUnavailable`).
    var isUp = true
    private var nextToken: UInt64 = 1
    /// Sends published and not yet answered by JetStream, by token.
    private var publishes: [UInt64: WaitingSend] = [:]
    /// The handover of each session that is handed its mailbox on this node.
    var handovers: [Int: ClusterHandover] = [:]
    /// Codes this node's sessions presented that wait on another node, until it answers.
    var matches: [MatchKey: PendingMatch] = [:]
    /// When each other node's heartbeat was last heard (loop time).
    var lastHeard: [ClusterNodeID: Double] = [:]
    /// Deletes JetStream refused, as last logged (such a frame is handed over again, and
    /// its receiver keeps it once by its id).
    var failedDeletesLogged = 0
    let sealing: HeldSealing

    /// A node that sends no heartbeat for this long is gone: its links are given up.
    static let nodeSilence = 3.0
    static let heartbeatInterval = 0.5
    /// How long a node waits for the node holding a code's entry to answer a match.
    static let matchTimeout = 2.0

    struct WaitingSend {
        let session: Int
        let seq: UInt64
        let forwarded: Bool
        /// What it counts against the tallies of `keys` until it is acknowledged.
        let charge: HeldCharge
        let heldAt: Int64
        let keys: [TallyKey]
    }

    struct MatchKey: Hashable {
        let session: Int
        let code: [UInt8]
    }

    struct PendingMatch {
        let node: ClusterNodeID
        let revision: UInt64
        let deadline: Double
    }

    init(link: ClusterLink, relayKey: AgreementKey) {
        self.link = link
        sealing = HeldSealing(key: Hash.deriveKey(from: relayKey.secretKey, context: "rchat relay cluster v1"))
    }

    func register(_ send: WaitingSend) -> UInt64 {
        let token = nextToken
        nextToken += 1
        publishes[token] = send
        return token
    }

    func answer(for token: UInt64) -> WaitingSend? { publishes.removeValue(forKey: token) }

    /// Tells the node at the other end of a link that this end left.
    func peerLeft(code: [UInt8], node: ClusterNodeID, session: Int, from leaving: Session) {
        link.send(toNode: node, NodeMessage.gone(code: code, to: session, from: link.node, session: leaving.number).encoded())
    }

    // MARK: held frames

    /// Which subject a frame is held under.
    enum Kind: String {
        case conversation = "m", ahead = "a", request = "r"
    }

    static func subject(_ kind: Kind, _ mailbox: MailboxID) -> String { "rchat.held.\(kind.rawValue).\(mailbox.hex)" }

    /// The kind and mailbox a subject names; nil for one that is not a held frame's.
    static func parse(subject: String) -> (Kind, MailboxID)? {
        let parts = subject.split(separator: ".")
        guard parts.count == 4, parts[0] == "rchat", parts[1] == "held", let kind = Kind(rawValue: String(parts[2])),
              let bytes = Hex.decode(String(parts[3])), let mailbox = MailboxID(bytes: bytes) else { return nil }
        return (kind, mailbox)
    }
}

/// A held frame as JetStream keeps it: held-at i64 ‖ a box sealed under a key every node
/// derives from the shared relay key (nonce in front) of `HeldPersistence`'s content
/// (sender ‖ origin ‖ payload; the sender's host and mailbox, so that the node handing it
/// over gives its bytes back to their tallies), bound to "rchat cluster held v1" ‖ kind ‖ mailbox ‖ held-at — so what
/// the NATS servers store names no origin, and a frame cannot be moved to another mailbox
/// or kind unseen.
struct HeldSealing: Sendable {
    let key: SecretBytes

    func seal(_ kind: ClusterNode.Kind, mailbox: MailboxID, heldAt: Int64, origin: DeliveryOrigin, payload: [UInt8],
              sender: HeldSender?) -> [UInt8] {
        var w = ByteWriter(capacity: 8 + 120 + payload.count)
        w.u64(UInt64(bitPattern: heldAt))
        w.raw(AEAD.sealWithRandomNonce(HeldPersistence.encodeContent(origin: origin, payload: payload, sender: sender),
                                       additionalData: Self.binding(kind, mailbox, heldAt), key: key))
        return w.bytes
    }

    func open(_ data: [UInt8], kind: ClusterNode.Kind, mailbox: MailboxID)
        -> (heldAt: Int64, origin: DeliveryOrigin, payload: [UInt8], sender: HeldSender?)? {
        var r = ByteReader(data)
        guard let raw = try? r.u64() else { return nil }
        let heldAt = Int64(bitPattern: raw)
        guard let plain = try? AEAD.openWithNonceInFront(r.rest(), additionalData: Self.binding(kind, mailbox, heldAt), key: key),
              let (sender, origin, payload) = HeldPersistence.decodeContent(plain) else { return nil }
        return (heldAt, origin, payload, sender)
    }

    private static func binding(_ kind: ClusterNode.Kind, _ mailbox: MailboxID, _ heldAt: Int64) -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.raw(Array("rchat cluster held v1".utf8)); w.raw(Array(kind.rawValue.utf8)); w.raw(mailbox.bytes); w.u64(UInt64(bitPattern: heldAt))
        return w.bytes
    }
}

/// One session being handed its mailbox on this node: first what was sent ahead (its own
/// reader, closed once it caught up), then everything in order (a second reader, where
/// what the first handed over is skipped and later frames sent ahead go first), each
/// frame in flight until acknowledged. In the long run one consumer per mailbox.
final class ClusterHandover {
    let mailbox: MailboxID
    /// Until it caught up with what was sent ahead.
    var ahead: MailboxReader?
    /// The last frame the reader of what was sent ahead brought (stream sequence).
    var aheadThrough: UInt64 = 0
    var all: MailboxReader?
    enum Phase {
        /// The first reader is being made; `welcomeOwed` when the session was not welcomed
        /// yet; `aheadArrived` when its frames came before the news that it was made.
        case opening(welcomeOwed: Bool, aheadArrived: Bool)
        /// Handing over what was sent ahead before the rest.
        case aheadFirst
        /// Everything in order; `caughtUp` once every frame held when it began has arrived.
        case reading(caughtUp: Bool)
    }
    var phase: Phase
    var queuedAhead: [(HeldArrival, ReaderRole)] = []
    var queued: [HeldArrival] = []
    var queuedHead = 0
    /// Handed over, not yet acknowledged: stream sequence → payload bytes, the reader, what
    /// it takes of that reader's budget, and what it counts against the mailbox's tally.
    var inFlight: [UInt64: (bytes: Int, role: ReaderRole, units: Int, counted: Counted)] = [:]
    /// What an acknowledged frame gives back, and to which tallies.
    struct Counted {
        let charge: HeldCharge
        let heldAt: Int64
        let keys: [TallyKey]
    }
    var inFlightBytes = 0
    /// Since it was last handed everything, until it is handed anything more (`settle`).
    var quiet: ClusterTallies.QuietMark?

    init(ahead: MailboxReader, mailbox: MailboxID, welcomeOwed: Bool) {
        self.ahead = ahead
        self.mailbox = mailbox
        phase = .opening(welcomeOwed: welcomeOwed, aheadArrived: false)
    }

    var hasQueued: Bool { !queuedAhead.isEmpty || queuedHead < queued.count }

    func reader(_ role: ReaderRole) -> MailboxReader? { role == .ahead ? ahead : all }

    func next() -> (HeldArrival, ReaderRole)? {
        if !queuedAhead.isEmpty { return queuedAhead.removeFirst() }
        guard queuedHead < queued.count else { return nil }
        let arrival = queued[queuedHead]
        queuedHead += 1
        if queuedHead > 1024, queuedHead * 2 > queued.count {
            queued.removeFirst(queuedHead)
            queuedHead = 0
        }
        return (arrival, .all)
    }
}

/// Frames between nodes on `rchat.node.<node>` (type u8, fields big-endian), and the
/// heartbeat on `rchat.nodes`:
///
/// | type | fields |
/// |---|---|
/// | 1 match | code 32, waiting session u64, from node 8, from session u64, from mailbox 32: the sender's session presented a code this node's session waits with |
/// | 2 linked | code 32, to session u64, from node 8, from session u64, from mailbox 32: matched; the receiver links its session |
/// | 3 refused | code 32, to session u64, reason u8 (1 no longer waiting, 2 link bound) |
/// | 4 gone | code 32, to session u64, from node 8, from session u64: that end of the link left |
/// | 5 heartbeat | node 8 |
enum NodeMessage: Equatable {
    case match(code: [UInt8], waiting: Int, from: ClusterNodeID, session: Int, mailbox: MailboxID)
    case linked(code: [UInt8], to: Int, from: ClusterNodeID, session: Int, mailbox: MailboxID)
    case refused(code: [UInt8], to: Int, reason: MatchRefusal)
    case gone(code: [UInt8], to: Int, from: ClusterNodeID, session: Int)
    case heartbeat(ClusterNodeID)

    enum MatchRefusal: UInt8 {
        case notWaiting = 1, linkBound = 2
    }

    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 96)
        switch self {
        case .match(let code, let waiting, let from, let session, let mailbox):
            w.u8(1); w.raw(code); w.u64(UInt64(waiting)); w.raw(from.bytes); w.u64(UInt64(session)); w.raw(mailbox.bytes)
        case .linked(let code, let to, let from, let session, let mailbox):
            w.u8(2); w.raw(code); w.u64(UInt64(to)); w.raw(from.bytes); w.u64(UInt64(session)); w.raw(mailbox.bytes)
        case .refused(let code, let to, let reason):
            w.u8(3); w.raw(code); w.u64(UInt64(to)); w.u8(reason.rawValue)
        case .gone(let code, let to, let from, let session):
            w.u8(4); w.raw(code); w.u64(UInt64(to)); w.raw(from.bytes); w.u64(UInt64(session))
        case .heartbeat(let node):
            w.u8(5); w.raw(node.bytes)
        }
        return w.bytes
    }

    static func decode(_ bytes: [UInt8]) -> NodeMessage? {
        var r = ByteReader(bytes)
        func node() throws -> ClusterNodeID { ClusterNodeID(bytes: try r.raw(ClusterNodeID.byteCount)) }
        func number() throws -> Int { Int(clamping: try r.u64()) }
        func mailbox() throws -> MailboxID? { MailboxID(bytes: try r.raw(MailboxID.byteCount)) }
        do {
            let message: NodeMessage?
            switch try r.u8() {
            case 1:
                let code = try r.raw(rendezvousCodeBytes), waiting = try number(), from = try node(), session = try number()
                message = try mailbox().map { .match(code: code, waiting: waiting, from: from, session: session, mailbox: $0) }
            case 2:
                let code = try r.raw(rendezvousCodeBytes), to = try number(), from = try node(), session = try number()
                message = try mailbox().map { .linked(code: code, to: to, from: from, session: session, mailbox: $0) }
            case 3:
                let code = try r.raw(rendezvousCodeBytes), to = try number()
                message = MatchRefusal(rawValue: try r.u8()).map { .refused(code: code, to: to, reason: $0) }
            case 4:
                message = .gone(code: try r.raw(rendezvousCodeBytes), to: try number(), from: try node(), session: try number())
            case 5:
                message = .heartbeat(try node())
            default:
                message = nil
            }
            return r.isAtEnd ? message : nil
        } catch {
            return nil
        }
    }
}
