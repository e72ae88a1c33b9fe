/// A link the relay made between this side and a peer: valid on one connection.
public struct PeerLink: Equatable, Sendable {
    /// The relay's number for the link (on the connection that was told).
    public let id: UInt32
    /// The connection attempt it belongs to: a link dies with its connection.
    public let generation: UInt64
    /// The rendezvous code the relay linked on: the handshake binds it (its prologue).
    public let code: [UInt8]
    /// The relay said the peer left: frames sent on the link are held for it, and the next
    /// link on this connection (the peer back) takes this one's place.
    public var peerGone: Bool

    public init(id: UInt32, generation: UInt64, code: [UInt8], peerGone: Bool = false) {
        self.id = id
        self.generation = generation
        self.code = code
        self.peerGone = peerGone
    }
}

/// How far a conversation's link and its session got in this run, as one value: the engine
/// holds one per conversation and changes it only through `next(on:)`, so every event in
/// every state has one answer — the next state, or a refusal — and the table of them is
/// tested without a relay.
///
/// `Initiator` is the handshake state of the side that begins (it finishes with the reply);
/// `Session` is what this run holds of a session the handshake set up (the verified peer
/// and what goes with it). Neither is looked into here.
///
///     unlinked ──linked──► handshaking ──answered──► awaitingAcceptance ──replyAccepted──► ready
///                          (initiating ─initiated─► initiator ──finished──────────────────► ready)
///
/// Every linked state can be `detached` (the link given up, the session kept) or
/// `dropped` (link and session end); a `linked` on another connection, or on this one
/// after the peer left, starts again at `handshaking`.
public enum LinkState<Initiator, Session> {
    /// No link, and no session of this run.
    case unlinked
    /// The link was given up on connection `generation` without ending this run's session
    /// (the contact was blocked, or presented keys other than the pinned ones). A new link
    /// on the same connection carries that session until its own handshake completes.
    case detached(generation: UInt64, session: Session?)
    /// On a link, its handshake under way. `carrying`: the session of an earlier link on
    /// the same connection, which keeps carrying frames on this one until the handshake
    /// completes — if the peer leaves mid-handshake, what was sent is still readable with
    /// the keys it saved.
    case handshaking(PeerLink, Handshaking, carrying: Session?)
    /// The responder answered: its session is set up, but nothing goes on it until the relay
    /// took the reply (a frame sent before could reach the peer ahead of the reply, unreadable).
    case awaitingAcceptance(PeerLink, Session)
    /// The handshake on this link completed: the session carries frames.
    case ready(PeerLink, Session)

    /// Who begins the handshake: the side whose account key sorts first.
    public enum Side: Equatable, Sendable {
        case initiator
        case responder
    }

    /// Where a handshake stands.
    public enum Handshaking {
        /// This side begins; its first message is not made yet (if it cannot be made, this
        /// link waits for the next).
        case initiating
        /// This side's first message went; the reply finishes it.
        case initiator(Initiator)
        /// The peer begins: its first message is awaited.
        case responder
    }

    public enum Event {
        /// The relay linked this side with the peer (both presented a code).
        case linked(PeerLink, as: Side)
        /// The initiator's first message was made (and goes on the link).
        case initiated(Initiator)
        /// A first handshake message came on link `link` of connection `generation`: may
        /// this side answer it? (Accepted without a change of state.)
        case firstMessage(link: UInt32, generation: UInt64)
        /// This side answered the first message: its session is set up, the reply goes.
        case answered(Session)
        /// A handshake reply came on link `link`: may the initiator read it? (Accepted
        /// without a change of state.)
        case reply(link: UInt32)
        /// The initiator read the reply: the session is set up.
        case finished(Session)
        /// The relay took this side's handshake reply.
        case replyAccepted
        /// The relay said the peer left link `link` of connection `generation`.
        case peerGone(link: UInt32, generation: UInt64)
        /// The link is given up and this run's session kept (contact blocked, keys refused).
        case detached
        /// The link and this run's session end (the connection closed, the conversation is
        /// set up again, the run ends).
        case dropped
    }

    /// An accepted event: the state after it, and whether the session of this run ends with
    /// it (and what was in flight on the connection before is forgotten).
    public struct Step {
        public var next: LinkState
        public var endsSession: Bool
    }

    /// The one transition function: the next state for `event`, or why it does not apply here.
    public func next(on event: Event) -> Result<Step, LinkRefusal> {
        func step(_ next: LinkState, endsSession: Bool = false) -> Result<Step, LinkRefusal> {
            .success(Step(next: next, endsSession: endsSession))
        }
        switch event {
        case let .linked(new, side):
            let handshake: Handshaking = side == .initiator ? .initiating : .responder
            let held: (generation: UInt64, session: Session?, peerThere: Bool)?
            switch self {
            case .unlinked: held = nil
            case let .detached(generation, session): held = (generation, session, false)
            case let .handshaking(link, _, carrying): held = (link.generation, carrying, !link.peerGone)
            case let .awaitingAcceptance(link, session), let .ready(link, session): held = (link.generation, session, !link.peerGone)
            }
            guard let held, held.generation == new.generation else {
                return step(.handshaking(new, handshake, carrying: nil), endsSession: true)
            }
            // Several codes of one presentation can match at once; both sides see the links in
            // the same order and keep the first while its peer is there.
            if held.peerThere { return .failure(.linkHeld) }
            return step(.handshaking(new, handshake, carrying: held.session))
        case .initiated(let initiator):
            guard case let .handshaking(link, .initiating, carrying) = self else { return .failure(.notExpected) }
            return step(.handshaking(link, .initiator(initiator), carrying: carrying))
        case let .firstMessage(id, generation):
            // Only on the live link: a handshake held from an earlier one is stale.
            guard let link, link.id == id, link.generation == generation else { return .failure(.otherLink) }
            switch self {
            case .handshaking(_, .responder, _): return step(self)
            case .awaitingAcceptance, .ready:
                // The initiator sends one per link: another is a replay (it would begin a
                // session nobody else holds).
                return .failure(.secondHandshake)
            default: return .failure(.notExpected)
            }
        case .answered(let session):
            guard case let .handshaking(link, .responder, _) = self else { return .failure(.notExpected) }
            return step(.awaitingAcceptance(link, session))
        case .reply(let id):
            guard let link, link.id == id else { return .failure(.otherLink) }
            guard case .handshaking(_, .initiator, _) = self else { return .failure(.notExpected) }
            return step(self)
        case .finished(let session):
            guard case let .handshaking(link, .initiator, _) = self else { return .failure(.notExpected) }
            return step(.ready(link, session))
        case .replyAccepted:
            guard case let .awaitingAcceptance(link, session) = self else { return .failure(.notExpected) }
            return step(.ready(link, session))
        case let .peerGone(id, generation):
            guard var link, link.id == id, link.generation == generation else { return .failure(.otherLink) }
            link.peerGone = true
            switch self {
            case let .handshaking(_, handshake, carrying): return step(.handshaking(link, handshake, carrying: carrying))
            case let .awaitingAcceptance(_, session): return step(.awaitingAcceptance(link, session))
            case let .ready(_, session): return step(.ready(link, session))
            case .unlinked, .detached: return .failure(.otherLink)
            }
        case .detached:
            guard let link else { return .failure(.noLink) }
            return step(.detached(generation: link.generation, session: session))
        case .dropped:
            return step(.unlinked, endsSession: true)
        }
    }

    /// The link of this run, if the conversation has one.
    public var link: PeerLink? {
        switch self {
        case .unlinked, .detached: return nil
        case let .handshaking(link, _, _), let .awaitingAcceptance(link, _), let .ready(link, _): return link
        }
    }

    /// This run's session, whether or not it carries frames now.
    public var session: Session? {
        switch self {
        case .unlinked: return nil
        case let .detached(_, session), let .handshaking(_, _, session): return session
        case let .awaitingAcceptance(_, session), let .ready(_, session): return session
        }
    }

    /// A session carries frames on a link now (held by the relay if the peer left).
    public var carriesFrames: Bool {
        switch self {
        case .handshaking(_, _, let carrying): return carrying != nil
        case .ready: return true
        case .unlinked, .detached, .awaitingAcceptance: return false
        }
    }

    /// The initiator's handshake, while its reply is awaited.
    public var initiator: Initiator? {
        if case .handshaking(_, .initiator(let initiator), _) = self { return initiator }
        return nil
    }
}

/// Why an event does not apply to a conversation's link state; the engine ignores it
/// (`secondHandshake` is counted as a forged frame).
public enum LinkRefusal: Error, Equatable, Sendable {
    /// A link on this connection is held and its peer is there: the first one stays.
    case linkHeld
    /// The event concerns another link than this conversation's, or it has none.
    case otherLink
    /// A first handshake message on a link whose handshake this side completed: a replay.
    case secondHandshake
    /// The state is not the one the event belongs to (a reply with no handshake under way,
    /// a first message to the side that begins, an acceptance nothing waits for).
    case notExpected
    /// There is no link to give up.
    case noLink
}

extension LinkState: Equatable where Initiator: Equatable, Session: Equatable {}
extension LinkState.Handshaking: Equatable where Initiator: Equatable {}
extension LinkState.Step: Equatable where Initiator: Equatable, Session: Equatable {}
extension LinkState: Sendable where Initiator: Sendable, Session: Sendable {}
extension LinkState.Handshaking: Sendable where Initiator: Sendable {}
extension LinkState.Event: Sendable where Initiator: Sendable, Session: Sendable {}
extension LinkState.Step: Sendable where Initiator: Sendable, Session: Sendable {}
