import Foundation
import RChatCore
import RChatCrypto
import RChatWire
import RChatStore

/// The pairwise channel to one contact as the running engine holds it: the contact, the
/// secret both sides derive, the saved session state, the link and session of this run, and
/// recovery. A channel is not a conversation: a conversation sends through the channels of
/// its members (`Engine.channels(of:)`). Every conversation is direct for now — the one
/// with this contact (`directConversation`).
final class PairwiseChannel {
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
    /// Whether this side also presents today's recovery code (`RendezvousCode.Presentation`):
    /// only once its counter codes found nobody for a while on this connection.
    var recoveryCode: RecoveryCodeListening = .notYet
    /// The link of this run and how far its session got (`LinkState`): changed only through
    /// `apply`, so that every event has one answer in every state.
    private(set) var linkState: ConversationLink = .unlinked
    /// What went in the current session and the relay has not settled (`SessionTraffic`):
    /// forgotten, all of it, when the session ends.
    var traffic = SessionTraffic()
    /// What this run stored from the peer, for the Delivered receipts owed (no read-back).
    var storedThisRun = StoredThisRun()
    /// Link frames the relay refused, to send again on the same link.
    var controlRetries: [(frame: LinkFrame, link: LinkID, generation: UInt64, at: Double)] = []
    /// The peer as the current session's handshake proved it.
    var peer: VerifiedPeer? { linkState.session }
    /// The device key each session of this run was made with (by session id): a notice sealed
    /// in one may come when no link is up (`receiveNotice`).
    var sessionDevices: [[UInt8]: [UInt8]] = [:]
    /// What recovery keeps across restarts (mirrors the store's `RecoveryFlags`, written in
    /// the transaction that changes them): this side started over and owes its notice; the
    /// peer started over and its notice is still to come (until then, recent messages may not
    /// have reached it).
    var recovery = RecoveryFlags(startedOverNoticeOwed: false, peerStartedOver: false)
    /// The relay refused something that waits out a backoff in the outbox.
    var backoffPending = false
    /// Files of which the relay refused a part for the recipient's quota, not tried again
    /// since: they wait for room at the relay (`UploadWait`).
    var roomRefused: Set<MessageRowID> = []
    /// A file stopped a window ahead of what the receiver reported: when that report is
    /// stale and the window no longer holds it back (engine ticks), if the receiver says
    /// nothing more by then.
    var windowReopensAt: Double?
    /// When a message's relay acknowledgement is overdue (Not confirmed), on the engine's
    /// monotonic clock (`Engine.ticks`), like `controlRetries`' times.
    private(set) var acknowledgements = AcknowledgementDeadlines()
    var acknowledgementDeadlines: [MessageRowID: Double] { acknowledgements.deadlines }
    var earliestAcknowledgement: Double { acknowledgements.earliest }

    /// `row` went to the relay: Not confirmed at `deadline` unless acknowledged before.
    func expectAcknowledgement(of row: MessageRowID, by deadline: Double) { acknowledgements.expect(row, by: deadline) }

    /// The relay answered for `row` (or it needs no answer any more).
    func acknowledged(_ row: MessageRowID) { acknowledgements.answered(row) }

    /// The acknowledgements overdue at `now`, taken.
    func takeOverdueAcknowledgements(at now: Double) -> [MessageRowID] { acknowledgements.takeOverdue(at: now) }

    /// What made this side send the contact a `groupSync` in this run (the hash of the group,
    /// what they said and this side's heads: `Engine.tellChanges`): each is answered once.
    /// Bounded: forgotten past 256.
    private var syncsSent: Set<[UInt8]> = []

    func hasSentSync(for key: [UInt8]) -> Bool { syncsSent.contains(key) }

    func sentSync(for key: [UInt8]) {
        if syncsSent.count >= 256 { syncsSent.removeAll() }
        syncsSent.insert(key)
    }

    /// The steady-traffic slot clock while the session is open (`Engine.keepSteadyTraffic`).
    var pace = SteadyPace.stopped
    /// What waits for the pace's next slot's end (receipts, a file's chunks) while it runs.
    var slotWaiting = SlotWaiting()
    /// Progress reports on files being received that wait for a slot's end (the latest each).
    var progressOwed: [MessageRowID: (id: MessageID, chunks: Int, complete: Bool)] = [:]

    /// Who this side is in this conversation: the account key it speaks with (the previous
    /// one until the contact accepts a rotation) and this device.
    let me: Handshake.LocalIdentity
    /// The session whose ratchet last opened a frame of theirs in this run: the relay reader
    /// threads get the keys ahead in it (`EnvelopeKeyring.Ahead`), as they were published last.
    var receivingSession: [UInt8]?
    var keysAhead: EnvelopeKeyring.Ahead?

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

    /// The conversation with this contact alone: what this channel carries today.
    var directConversation: ConversationID { contact.id.conversation }

    var role: Handshake.Role { Handshake.Role.of(myAccountKey: secret.myAccountKey, peerAccountKey: secret.peerAccountKey) }

    /// A session is up on a link: messages go now (held by the relay if the peer left).
    /// A responder waits until the relay took its handshake reply: anything sent before it
    /// could reach the peer ahead of the reply, unreadable.
    var hasSession: Bool { saved?.current != nil && linkState.carriesFrames }
    /// The session's device is not the one pinned from the contact's code (a new phone, or
    /// someone else's copy of their account keys): until the user enters the contact's code
    /// again, which pins it, only what they send by hand goes to it (`SendPolicy`).
    var awaitingVerification: Bool { peer.map { !constantTimeEqual($0.deviceKey, contact.deviceKey) } ?? false }
    /// The position of the row that told the user of the session's unpinned device ("Sam is
    /// using a new device…"), set when the session begins; nil: none.
    var newDeviceRow: Int64?
    var standing: SendPolicy.Contact { contact.standing }
    /// The session's device as `SendPolicy` sees it (pinned while there is no session: a
    /// message request is sealed to the pinned account key).
    var device: SendPolicy.Device { awaitingVerification ? .unpinned(announcedAt: newDeviceRow) : .pinned }
    /// Whether `frame` may go to this contact now, and if not why (`SendPolicy`, the one rule).
    func may(_ frame: SendPolicy.Frame) -> SendPolicy.Decision { SendPolicy.decide(frame, to: standing, device: device) }
    /// A session that carries `frame` now.
    func carries(_ frame: SendPolicy.Frame) -> Bool { hasSession && may(frame) == .send }
    /// A session that carries what rChat sends by itself (receipts, file progress).
    var canSend: Bool { carries(.receipt) }

    /// Whether sessions may be set up at all with this contact.
    var isReachable: Bool { SendPolicy.mayLink(with: standing) }

    /// Applies an event to the link state. A refused event changes nothing (the caller
    /// decides whether it is worth a word); an accepted one that ends the session ends it
    /// here, with what was in flight for it.
    @discardableResult
    func apply(_ event: ConversationLink.Event, at now: Int64) -> Result<Void, LinkRefusal> {
        switch linkState.next(on: event) {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(let step):
            if step.endsSession {
                saved?.endCurrent(at: now)
                traffic.forget(.ended)
            }
            linkState = step.next
            return .success(())
        }
    }

    /// Ends this run's session and link (the connection went away).
    func dropLink(at now: Int64) {
        apply(.dropped, at: now)
    }
}

extension Contact {
    /// The contact as `SendPolicy` sees them.
    var standing: SendPolicy.Contact {
        if isDeleted { return .deleted }
        if isBlocked { return .blocked }
        switch state {
        case .ok: return .ok
        case .keysDontMatch: return .keysDontMatch
        case .request: return .request
        }
    }
}

/// A conversation's link state: the session it carries is known by the peer its handshake
/// proved.
typealias ConversationLink = LinkState<Handshake.Initiator, VerifiedPeer>

/// When an established side adds today's recovery code to its counter codes (docs/PROTOCOL.md,
/// "What a relay can link"): not while the counter code may be enough.
enum RecoveryCodeListening {
    /// Counter codes not presented yet on this connection, or a link was made.
    case notYet
    /// Counter codes presented; recovery too if no link by then (engine ticks).
    case due(at: Double)
    /// The counter codes found nobody: the recovery code is presented with them.
    case listening
}

/// When each message a channel sent is overdue for its relay's acknowledgement (Not
/// confirmed), on the engine's monotonic clock, and the earliest of them: the channel's
/// deadline. No deadline is earlier than `earliest`; one may be later (an answered message's
/// deadline leaves without moving it: the engine wakes early once, finds nothing overdue,
/// and `earliest` is exact again).
struct AcknowledgementDeadlines {
    private(set) var deadlines: [MessageRowID: Double] = [:]
    private(set) var earliest = Double.infinity

    /// An earlier deadline for `row` stays.
    mutating func expect(_ row: MessageRowID, by deadline: Double) {
        guard deadlines[row] == nil else { return }
        deadlines[row] = deadline
        earliest = min(earliest, deadline)
    }

    mutating func answered(_ row: MessageRowID) { deadlines[row] = nil }

    /// What is overdue at `now`, taken, in row order.
    mutating func takeOverdue(at now: Double) -> [MessageRowID] {
        guard earliest <= now else { return [] }
        let overdue = deadlines.filter { $0.value <= now }.map(\.key).sorted { $0.rawValue < $1.rawValue }
        for row in overdue { deadlines[row] = nil }
        earliest = deadlines.values.min() ?? .infinity
        return overdue
    }
}
