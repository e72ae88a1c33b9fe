import Foundation
import RChatCore
import RChatCrypto
import RChatWire
import RChatStore

/// One conversation as the running engine holds it: the contact, the secret both sides
/// derive, the saved session state, and the link and session of this run.
final class LiveConversation {
    var contact: Contact {
        didSet { if contact.relayAddress != oldValue.relayAddress { contactRelay = Self.relay(of: contact) } }
    }
    /// The contact's own relay (from its code), parsed once: message requests go there.
    private(set) var contactRelay: RelayAddress?
    let secret: ConversationSecret
    /// The secrets of this conversation before its keys changed in this run (a rotation on
    /// either side, a code entered again), newest first: what the contact sealed before it
    /// learned of the change still opens here instead of being dropped.
    var formerSecrets: [ConversationSecret] = []
    /// The relay hosting the conversation (the one in the code whose account key sorts first).
    let relay: RelayAddress
    /// nil: no saved state — a new conversation, or this side started over.
    var saved: SavedSessionState?
    /// The link of this run, on the connection of `linkGeneration`.
    var link: LinkID?
    var linkGeneration: UInt64 = 0
    /// The rendezvous code the relay linked us on: the link's handshake binds it (its
    /// prologue), so a handshake message replayed on another link does not open.
    var linkCode: [UInt8] = []
    /// This side answered a first handshake message on the current link: the initiator sends
    /// one per link, so another is a replay (it would begin a session nobody else holds).
    var answeredOnThisLink = false
    var peerGone = false
    var initiator: Handshake.Initiator?
    /// Messages sent in the current session (or as requests in this run): not sent twice.
    var sent: Set<MessageRowID> = []
    var deliveredInFlight = DeliveredReceiptsInFlight()
    /// What this run stored from the peer, for the Delivered receipts owed (no read-back).
    var storedThisRun = StoredThisRun()
    var readReceiptsInFlight: Set<MessageID> = []
    var noticeInFlight: Set<MessageID> = []
    /// Link frames the relay refused, to send again on the same link.
    var controlRetries: [(frame: LinkFrame, link: LinkID, generation: UInt64, at: Double)] = []
    /// The peer as the current session's handshake proved it.
    var peer: VerifiedPeer?
    /// What recovery keeps across restarts (mirrors the store's `RecoveryFlags`, written in
    /// the transaction that changes them): this side started over and owes its notice; the
    /// peer started over and its notice is still to come (until then, recent messages may not
    /// have reached it).
    var recovery = RecoveryFlags(startedOverNoticeOwed: false, peerStartedOver: false)
    /// The started-over notice went on the current link and the relay has not taken it yet.
    var startedOverNoticeInFlight = false
    var noticeReceived = false
    /// The relay refused something that waits out a backoff in the outbox.
    var backoffPending = false
    /// When a message's relay acknowledgement is overdue (Not confirmed), on the engine's
    /// monotonic clock (`Engine.ticks`), like `controlRetries`' times.
    var acknowledgementDeadlines: [MessageRowID: Double] = [:]

    /// Who this side is in this conversation: the account key it speaks with (the previous
    /// one until the contact accepts a rotation) and this device.
    let me: Handshake.LocalIdentity

    init(contact: Contact, secret: ConversationSecret, relay: RelayAddress, saved: SavedSessionState?,
         me: Handshake.LocalIdentity) {
        self.me = me
        self.contact = contact
        self.contactRelay = Self.relay(of: contact)
        self.secret = secret
        self.relay = relay
        self.saved = saved
    }

    private static func relay(of contact: Contact) -> RelayAddress? {
        contact.relayAddress.flatMap { try? RelayAddress(parsing: $0) }
    }

    var role: Handshake.Role { Handshake.Role.of(myAccountKey: secret.myAccountKey, peerAccountKey: secret.peerAccountKey) }

    /// A session is up on a link: messages go now (held by the relay if the peer left).
    /// A responder waits until the relay took its handshake reply: anything sent before it
    /// could reach the peer ahead of the reply, unreadable.
    var hasSession: Bool { saved?.current != nil && link != nil && !awaitingReplyAcceptance }
    /// The session's device is not the one pinned from the contact's code (a new phone, or
    /// someone else's copy of their account keys): like a changed safety number, nothing
    /// but the handshake and its empty confirmation goes to it — no message, receipt,
    /// notice or key — until the user enters the contact's code again, which pins it.
    var awaitingVerification: Bool { peer.map { !constantTimeEqual($0.deviceKey, contact.deviceKey) } ?? false }
    /// A session that carries what this side writes.
    var canSend: Bool { hasSession && !awaitingVerification }
    var awaitingReplyAcceptance = false

    /// Whether sessions may be set up at all with this contact.
    var isReachable: Bool {
        !contact.isDeleted && !contact.isBlocked && contact.state == .ok
    }

    /// Ends this run's session and link (the connection went away).
    func dropLink(at now: Int64) {
        saved?.endCurrent(at: now)
        link = nil
        answeredOnThisLink = false
        initiator = nil
        peerGone = false
        sent.removeAll()
        deliveredInFlight.forgetAll()
        readReceiptsInFlight.removeAll()
        noticeInFlight.removeAll()
        peer = nil
        awaitingReplyAcceptance = false
        startedOverNoticeInFlight = false
    }
}
