import RChatCore
import RChatCrypto
import RChatNet
import RChatRelayClient

/// One client connection as the relay sees it: where it is in the handshake, its sealed
/// channel, the mailbox it proved, its links and pending codes, and its frame counters.
final class Session: StreamConnectionDelegate {
    enum Phase {
        case awaitingHello
        case awaitingAuth(transcript: [UInt8], challenge: [UInt8])
        case ready
    }

    /// This side of a link.
    struct LinkEnd {
        let code: [UInt8]
        let peerMailbox: MailboxID
        weak var peer: Session?
        /// Origin of frames this side sends on the link, and of frames it receives.
        let outgoingOrigin: UInt32
        let incomingOrigin: UInt32
    }

    let number: Int
    let connection: StreamConnection
    /// Where it came from, as counted against the per-address limit.
    let host: HostAddress
    unowned let relay: Relay
    var phase = Phase.awaitingHello
    var cipher: TransportCipher?
    var mailbox: MailboxID?
    var links: [LinkID: LinkEnd] = [:]
    /// Origin number → this connection's link, to label live deliveries.
    var linkForOrigin: [UInt32: LinkID] = [:]
    var pendingCodes: Set<[UInt8]> = []
    /// Why codes it presented were ignored, each logged once per connection.
    var ignoredCodesLogged: Set<Pairing.Ignored> = []
    /// When its last frame arrived (loop time): an idle connection is closed.
    var lastFrameAt: Double
    var counters = FrameCounters()
    /// A `drained` is owed once the handover that began at authentication is complete.
    var drainedNoticeDue = false

    init(number: Int, connection: StreamConnection, host: HostAddress, relay: Relay) {
        self.number = number
        self.connection = connection
        self.host = host
        self.relay = relay
        lastFrameAt = connection.openedAt
    }

    var isReady: Bool { if case .ready = phase { return true } else { return false } }
    var isOpen: Bool { !connection.isClosed }
    var name: String { mailbox.map { "conn#\(number) (mailbox \($0))" } ?? "conn#\(number)" }

    /// Seals and queues one message.
    func send(_ message: RelayMessage, kind: FrameCounters.Outbound) {
        guard cipher != nil else { return }
        counters.count(kind)
        connection.send(cipher!.seal(message.encoded()))
    }

    /// Seals and queues an already encoded body (the delivery fast path).
    func sendEncoded(_ body: [UInt8], kind: FrameCounters.Outbound) {
        counters.count(kind)
        connection.send(cipher!.seal(body))
    }

    // MARK: StreamConnectionDelegate

    func connection(_ connection: StreamConnection, didReceive frame: [UInt8]) {
        lastFrameAt = connection.loop.now
        relay.received(frame, on: self)
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
