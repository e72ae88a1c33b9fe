import RChatCore
import RChatCrypto
import RChatNet
import RChatWire

/// One client connection as the relay sees it: where it is in the handshake, its sealed
/// channel, the mailbox it proved, its links and pending codes, and its frame counters.
final class Session: StreamConnectionDelegate {
    /// Where the connection is: each case carries what that step has and needs.
    enum Phase {
        /// Nothing sealed yet: the client's hello is the next frame.
        case awaitingHello
        /// Keys agreed; the client must prove a mailbox key over this transcript and challenge.
        case awaitingAuth(Channel, transcript: [UInt8], challenge: [UInt8])
        /// The mailbox is proved: messages flow.
        case ready(Channel, mailbox: MailboxID)
    }

    /// The sealed channel, shared by reference so that sealing a frame updates its counter
    /// in place (the frame counter is the nonce).
    final class Channel {
        var cipher: TransportCipher
        init(_ cipher: TransportCipher) { self.cipher = cipher }
    }

    /// This side of a link.
    struct LinkEnd {
        let code: [UInt8]
        let peerMailbox: MailboxID
        var peer: LinkPeer
        /// Origin of frames this side sends on the link, and of frames it receives.
        let outgoingOrigin: UInt32
        let incomingOrigin: UInt32
    }

    /// Who is at the other end of a link.
    enum LinkPeer {
        /// A connection of this relay (held weakly: it may close first).
        case here(WeakSession)
        /// A connection of another node of the cluster.
        case elsewhere(node: ClusterNodeID, session: Int)
        /// It left: what this end sends is held for the peer's mailbox.
        case gone

        static func here(_ session: Session) -> LinkPeer { .here(WeakSession(session: session)) }

        /// The peer's connection when it is one of this relay's and still open.
        var openSession: Session? {
            if case .here(let weak) = self, let session = weak.session, session.isOpen { return session }
            return nil
        }

        /// Whether a frame sent on the link reaches a connected peer now.
        var isLive: Bool {
            switch self {
            case .here: return openSession != nil
            case .elsewhere: return true
            case .gone: return false
            }
        }
    }

    struct WeakSession {
        weak var session: Session?
    }

    let number: Int
    let connection: any RelayConnectionPort
    /// Where it came from, as counted against the per-address limit.
    let host: HostAddress
    unowned let relay: Relay
    var phase = Phase.awaitingHello
    var links: [LinkID: LinkEnd] = [:]
    /// Origin number → this connection's link, to label live deliveries.
    var linkForOrigin: [UInt32: LinkID] = [:]
    var pendingCodes: Set<[UInt8]> = []
    /// Why codes it presented were ignored, each logged once per connection.
    var ignoredCodesLogged: Set<Pairing.Ignored> = []
    /// Why invites it registered were ignored (host or registry full), each logged once.
    var ignoredInvitesLogged: Set<InviteRegistry.Outcome> = []
    /// When its last frame arrived (loop time): an idle connection is closed.
    var lastFrameAt: Double
    var counters = FrameCounters()
    /// A `drained` is owed once the handover that began at authentication is complete.
    var drainedNoticeDue = false

    init(number: Int, connection: any RelayConnectionPort, host: HostAddress, relay: Relay) {
        self.number = number
        self.connection = connection
        self.host = host
        self.relay = relay
        lastFrameAt = connection.openedAt
    }

    var isReady: Bool { if case .ready = phase { return true } else { return false } }
    /// The mailbox the connection proved; nil before authentication.
    var mailbox: MailboxID? { if case .ready(_, let mailbox) = phase { return mailbox } else { return nil } }
    /// The sealed channel; nil before the hello.
    var channel: Channel? {
        switch phase {
        case .awaitingHello: return nil
        case .awaitingAuth(let channel, _, _), .ready(let channel, _): return channel
        }
    }
    var isOpen: Bool { !connection.isClosed }
    var name: String { mailbox.map { "conn#\(number) (mailbox \($0))" } ?? "conn#\(number)" }

    /// Seals and queues one message (nothing before the channel exists).
    func send(_ message: RelayMessage, kind: FrameCounters.Outbound) {
        sendEncoded(message.encoded(), kind: kind)
    }

    /// Seals and queues an already encoded body (the delivery fast path). A `deliver` is
    /// padded to a wire size, as clients pad theirs; the small control frames carry only the
    /// padding's trailer (`TransportCipher.Fill`).
    func sendEncoded(_ body: [UInt8], kind: FrameCounters.Outbound) {
        guard let channel else { return }
        counters.count(kind)
        connection.send(channel.cipher.seal(body, fill: kind == .deliver ? .toWireSize : .trailerOnly))
    }

    // MARK: StreamConnectionDelegate

    func connection(_ connection: StreamConnection, didReceive frame: [UInt8]) {
        received(frame)
    }

    func connection(_ connection: StreamConnection, violated error: FrameError) {
        switch error {
        case .oversized: relay.fail(self, .oversized, because: error.description)
        case .empty: relay.fail(self, .malformed, because: error.description)
        }
    }

    func connectionDidClose(_ connection: StreamConnection) {
        relay.closed(self)
    }
}

extension Session: RelayConnectionReceiver {
    func received(_ frame: [UInt8]) {
        lastFrameAt = relay.loop.now
        relay.received(frame, on: self)
    }

    func connectionClosed() { relay.closed(self) }
}
