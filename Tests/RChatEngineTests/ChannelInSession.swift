import Foundation
import XCTest
import RChatCore
import RChatCrypto
import RChatStore
import RChatRelayClient
@testable import RChatEngine

/// Alice's pairwise channel to Sam, in a session a real handshake made, and what Sam needs to
/// read what Alice sends on it: for the tests of one engine component alone, with a stand-in
/// for the rest of the engine (`ReceiptsTests`, `RecoveryComponentTests`).
struct ChannelInSession {
    /// A relay nobody dials: the component tests never connect.
    static let offline = try! RelayAddress(parsing: "127.0.0.1:9/" + String(repeating: "A", count: 43))

    let alice: AccountService
    let samDevice: SigningKey
    let sam: ContactID
    let channel: PairwiseChannel
    let samSecret: ConversationSecret
    /// Sam's side of the session, as his engine keeps it: it opens what Alice sent.
    let samSession: PeerSession

    /// Both accounts in `directory` on `clock`; the session begins at `time`. `peerHolds`: Sam
    /// is known to hold the session (false: Alice answered his handshake and has heard
    /// nothing in the session since).
    init(in directory: URL, clock: any Clock = SystemClock(), at time: Int64, peerHolds: Bool = true) throws {
        func account(_ name: String) throws -> AccountService {
            let locations = Locations(home: directory.appendingPathComponent("\(name)-home").path,
                                      deviceDirectory: directory.appendingPathComponent("\(name)-device").path)
            try AccountService.create(at: locations, name: name, relay: Self.offline)
            return try AccountService(locations: locations, clock: clock)
        }
        let aliceAccount = try account("Alice"), samAccount = try account("Sam")
        let aliceID = try aliceAccount.identity(), samID = try samAccount.identity()
        _ = try aliceAccount.addContact(samID.contactCode(device: samAccount.device), name: "Sam")
        let contact = try XCTUnwrap(try aliceAccount.store.contact(named: "Sam"))
        let me = Handshake.LocalIdentity(account: aliceID.accountKey, device: aliceAccount.device)
        let samMe = Handshake.LocalIdentity(account: samID.accountKey, device: samAccount.device)
        let alicePinned = Handshake.PinnedKeys(accountKey: aliceID.accountKey.publicKey, deviceKey: aliceAccount.device.publicKey)
        let samPinned = Handshake.PinnedKeys(accountKey: contact.accountKey, deviceKey: contact.deviceKey)
        // The side whose key sorts first begins; the session carries frames once the
        // handshake completed (the responder's: once the relay took its reply).
        let link = PeerLink(id: 1, generation: 1, code: [1, 2, 3])
        let aliceSession: Session, samSession: Session, events: [ConversationLink.Event]
        if Handshake.Role.of(myAccountKey: aliceID.accountKey.publicKey, peerAccountKey: contact.accountKey) == .initiator {
            let initiator = try Handshake.Initiator(me: me, peer: samPinned, reconnectCounter: 0)
            let (reply, session) = try Handshake.Responder(me: samMe, peer: alicePinned, reconnectCounter: 0).respond(to: initiator.firstMessage())
            (aliceSession, samSession) = (try initiator.finish(reply), session)
            events = [.linked(link, as: .initiator), .initiated(initiator), .finished(aliceSession.peer)]
        } else {
            let initiator = try Handshake.Initiator(me: samMe, peer: alicePinned, reconnectCounter: 0)
            let (reply, session) = try Handshake.Responder(me: me, peer: samPinned, reconnectCounter: 0).respond(to: initiator.firstMessage())
            (aliceSession, samSession) = (session, try initiator.finish(reply))
            events = [.linked(link, as: .responder), .answered(aliceSession.peer), .replyAccepted]
        }
        let channel = PairwiseChannel(contact: contact, secret: try ConversationSecret(myAccount: aliceID.accountKey, peerAccountKey: contact.accountKey),
                                      relay: Self.offline, saved: SavedSessionState(), me: me)
        for event in events {
            guard case .success = channel.apply(event, at: time) else { throw EngineError.io("the link refused \(event)") }
        }
        // As the engine does once the handshake completed (a new link ended the run's session).
        channel.saved?.begin(aliceSession, at: time, confirmed: peerHolds, peerHolds: peerHolds)
        guard channel.hasSession else { throw EngineError.io("no session after the handshake") }
        alice = aliceAccount
        samDevice = samAccount.device
        sam = contact.id
        self.channel = channel
        samSecret = try ConversationSecret(myAccount: samID.accountKey, peerAccountKey: aliceID.accountKey.publicKey)
        self.samSession = PeerSession(samSession)
    }
}

/// One side of a session as an engine keeps it (its saved state and ratchet), for a test
/// that plays the peer without an engine.
final class PeerSession {
    var state: SavedSessionState
    let id: [UInt8]

    init(_ session: Session) {
        state = session.started
        id = session.id
    }

    private var opened: [[UInt8]: [UInt8]] = [:]

    /// The body of an envelope the other side sent, its ratchet moved past it (one opened
    /// before: what it held then — its key is gone).
    func open(_ envelope: [UInt8], header: EnvelopeHeader) throws -> [UInt8] {
        if let body = opened[envelope] { return body }
        let body = try state.open(envelope, header: header, at: 0)
        opened[envelope] = body
        return body
    }

    /// An envelope to the other side, under the next key of the ratchet.
    func seal(_ kind: EnvelopeKind, id: MessageID = .random(), _ body: [UInt8], conversation: ConversationSecret) -> [UInt8] {
        state.seal(kind: kind, messageID: id, body: body, conversation: conversation)!
    }
}

extension Session {
    /// This side's saved state with the session current, as an engine begins it.
    var started: SavedSessionState {
        var state = SavedSessionState()
        state.begin(self, at: 0)
        return state
    }
}
