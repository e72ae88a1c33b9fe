import XCTest
@testable import RChatCore

/// The link state of one conversation: every event in every state, the next state or the
/// refusal. The payloads are labels: the machine never looks into them.
final class LinkStateTests: XCTestCase {
    typealias State = LinkState<String, String>
    typealias Event = State.Event

    enum Outcome: Equatable, CustomStringConvertible {
        case to(State, endsSession: Bool = false)
        case refused(LinkRefusal)

        var description: String {
            switch self {
            case let .to(state, ends): return "\(state)\(ends ? " (ends the session)" : "")"
            case let .refused(refusal): return "refused: \(refusal)"
            }
        }
    }

    /// The link every linked state is on (link 7 of connection 2), the same after the peer
    /// left, another link on that connection, and a link on the next connection.
    static let here = PeerLink(id: 7, generation: 2, code: [7])
    static let gone = PeerLink(id: 7, generation: 2, code: [7], peerGone: true)
    static let sameConnection = PeerLink(id: 8, generation: 2, code: [8])
    static let nextConnection = PeerLink(id: 8, generation: 3, code: [9])

    /// Every kind of state, by name ("s": a session of this run, "i": an initiator).
    static let states: [(String, State)] = [
        ("unlinked", .unlinked),
        ("detached", .detached(generation: 2, session: nil)),
        ("detached with session", .detached(generation: 2, session: "s")),
        ("initiating", .handshaking(here, .initiating, carrying: nil)),
        ("initiator", .handshaking(here, .initiator("i"), carrying: nil)),
        ("initiator carrying", .handshaking(here, .initiator("i"), carrying: "s")),
        ("responder", .handshaking(here, .responder, carrying: nil)),
        ("responder carrying", .handshaking(here, .responder, carrying: "s")),
        ("responder, peer gone", .handshaking(gone, .responder, carrying: "s")),
        ("awaiting acceptance", .awaitingAcceptance(here, "s")),
        ("awaiting acceptance, peer gone", .awaitingAcceptance(gone, "s")),
        ("ready", .ready(here, "s")),
        ("ready, peer gone", .ready(gone, "s")),
    ]

    /// Every kind of event, by name ("n": the new session).
    static let events: [(String, Event)] = [
        ("linked here", .linked(sameConnection, as: .initiator)),
        ("linked next", .linked(nextConnection, as: .responder)),
        ("initiated", .initiated("j")),
        ("first here", .firstMessage(link: 7, generation: 2)),
        ("first stale", .firstMessage(link: 7, generation: 1)),
        ("answered", .answered("n")),
        ("reply here", .reply(link: 7)),
        ("reply other", .reply(link: 8)),
        ("finished", .finished("n")),
        ("reply accepted", .replyAccepted),
        ("gone here", .peerGone(link: 7, generation: 2)),
        ("gone other", .peerGone(link: 8, generation: 2)),
        ("detached", .detached),
        ("dropped", .dropped),
    ]

    func testEveryEventInEveryState() {
        let here = Self.here, gone = Self.gone
        let newLinkHere = Outcome.to(.handshaking(Self.sameConnection, .initiating, carrying: nil))
        let newLinkNext = Outcome.to(.handshaking(Self.nextConnection, .responder, carrying: nil), endsSession: true)
        let dropped = Outcome.to(.unlinked, endsSession: true)
        let other = Outcome.refused(.otherLink), unexpected = Outcome.refused(.notExpected)
        let held = Outcome.refused(.linkHeld), replay = Outcome.refused(.secondHandshake)
        // Columns in the order of `events`.
        let table: [String: [Outcome]] = [
            "unlinked": [
                .to(.handshaking(Self.sameConnection, .initiating, carrying: nil), endsSession: true), newLinkNext,
                unexpected, other, other, unexpected, other, other, unexpected, unexpected, other, other,
                .refused(.noLink), dropped,
            ],
            "detached": [
                newLinkHere, newLinkNext,
                unexpected, other, other, unexpected, other, other, unexpected, unexpected, other, other,
                .refused(.noLink), dropped,
            ],
            "detached with session": [
                .to(.handshaking(Self.sameConnection, .initiating, carrying: "s")), newLinkNext,
                unexpected, other, other, unexpected, other, other, unexpected, unexpected, other, other,
                .refused(.noLink), dropped,
            ],
            "initiating": [
                held, newLinkNext,
                .to(.handshaking(here, .initiator("j"), carrying: nil)), unexpected, other, unexpected, unexpected, other,
                unexpected, unexpected, .to(.handshaking(gone, .initiating, carrying: nil)), other,
                .to(.detached(generation: 2, session: nil)), dropped,
            ],
            "initiator": [
                held, newLinkNext,
                unexpected, unexpected, other, unexpected, .to(.handshaking(here, .initiator("i"), carrying: nil)), other,
                .to(.ready(here, "n")), unexpected, .to(.handshaking(gone, .initiator("i"), carrying: nil)), other,
                .to(.detached(generation: 2, session: nil)), dropped,
            ],
            "initiator carrying": [
                held, newLinkNext,
                unexpected, unexpected, other, unexpected, .to(.handshaking(here, .initiator("i"), carrying: "s")), other,
                .to(.ready(here, "n")), unexpected, .to(.handshaking(gone, .initiator("i"), carrying: "s")), other,
                .to(.detached(generation: 2, session: "s")), dropped,
            ],
            "responder": [
                held, newLinkNext,
                unexpected, .to(.handshaking(here, .responder, carrying: nil)), other, .to(.awaitingAcceptance(here, "n")),
                unexpected, other, unexpected, unexpected, .to(.handshaking(gone, .responder, carrying: nil)), other,
                .to(.detached(generation: 2, session: nil)), dropped,
            ],
            "responder carrying": [
                held, newLinkNext,
                unexpected, .to(.handshaking(here, .responder, carrying: "s")), other, .to(.awaitingAcceptance(here, "n")),
                unexpected, other, unexpected, unexpected, .to(.handshaking(gone, .responder, carrying: "s")), other,
                .to(.detached(generation: 2, session: "s")), dropped,
            ],
            "responder, peer gone": [
                .to(.handshaking(Self.sameConnection, .initiating, carrying: "s")), newLinkNext,
                unexpected, .to(.handshaking(gone, .responder, carrying: "s")), other, .to(.awaitingAcceptance(gone, "n")),
                unexpected, other, unexpected, unexpected, .to(.handshaking(gone, .responder, carrying: "s")), other,
                .to(.detached(generation: 2, session: "s")), dropped,
            ],
            "awaiting acceptance": [
                held, newLinkNext,
                unexpected, replay, other, unexpected, unexpected, other, unexpected, .to(.ready(here, "s")),
                .to(.awaitingAcceptance(gone, "s")), other,
                .to(.detached(generation: 2, session: "s")), dropped,
            ],
            "awaiting acceptance, peer gone": [
                .to(.handshaking(Self.sameConnection, .initiating, carrying: "s")), newLinkNext,
                unexpected, replay, other, unexpected, unexpected, other, unexpected, .to(.ready(gone, "s")),
                .to(.awaitingAcceptance(gone, "s")), other,
                .to(.detached(generation: 2, session: "s")), dropped,
            ],
            "ready": [
                held, newLinkNext,
                unexpected, replay, other, unexpected, unexpected, other, unexpected, unexpected,
                .to(.ready(gone, "s")), other,
                .to(.detached(generation: 2, session: "s")), dropped,
            ],
            "ready, peer gone": [
                .to(.handshaking(Self.sameConnection, .initiating, carrying: "s")), newLinkNext,
                unexpected, replay, other, unexpected, unexpected, other, unexpected, unexpected,
                .to(.ready(gone, "s")), other,
                .to(.detached(generation: 2, session: "s")), dropped,
            ],
        ]
        XCTAssertEqual(Set(table.keys), Set(Self.states.map(\.0)), "one row per state")
        for (name, state) in Self.states {
            guard let row = table[name] else { continue }
            XCTAssertEqual(row.count, Self.events.count, "one column per event in \(name)")
            for ((eventName, event), expected) in zip(Self.events, row) {
                let outcome: Outcome
                switch state.next(on: event) {
                case .success(let step): outcome = .to(step.next, endsSession: step.endsSession)
                case .failure(let refusal): outcome = .refused(refusal)
                }
                XCTAssertEqual(outcome, expected, "\(name) + \(eventName)")
            }
        }
    }

    /// What each state says about its link, its session and whether frames may go.
    func testWhatEachStateCarries() {
        // (link id, session, carries frames, initiator)
        let expected: [String: (UInt32?, String?, Bool, String?)] = [
            "unlinked": (nil, nil, false, nil),
            "detached": (nil, nil, false, nil),
            "detached with session": (nil, "s", false, nil),
            "initiating": (7, nil, false, nil),
            "initiator": (7, nil, false, "i"),
            "initiator carrying": (7, "s", true, "i"),
            "responder": (7, nil, false, nil),
            "responder carrying": (7, "s", true, nil),
            "responder, peer gone": (7, "s", true, nil),
            "awaiting acceptance": (7, "s", false, nil),
            "awaiting acceptance, peer gone": (7, "s", false, nil),
            "ready": (7, "s", true, nil),
            "ready, peer gone": (7, "s", true, nil),
        ]
        for (name, state) in Self.states {
            guard let (link, session, carries, initiator) = expected[name] else { return XCTFail("no row for \(name)") }
            XCTAssertEqual(state.link?.id, link, name)
            XCTAssertEqual(state.session, session, name)
            XCTAssertEqual(state.carriesFrames, carries, name)
            XCTAssertEqual(state.initiator, initiator, name)
        }
    }

    /// The path of a whole handshake, both sides, through the one transition function.
    func testAHandshakeFromLinkToReady() throws {
        var initiator = State.unlinked, responder = State.unlinked
        initiator = try initiator.next(on: .linked(Self.here, as: .initiator)).get().next
        initiator = try initiator.next(on: .initiated("i")).get().next
        responder = try responder.next(on: .linked(Self.here, as: .responder)).get().next
        XCTAssertNoThrow(try responder.next(on: .firstMessage(link: 7, generation: 2)).get())
        responder = try responder.next(on: .answered("r")).get().next
        XCTAssertFalse(responder.carriesFrames, "nothing goes before the relay took the reply")
        XCTAssertNoThrow(try initiator.next(on: .reply(link: 7)).get())
        initiator = try initiator.next(on: .finished("i-session")).get().next
        responder = try responder.next(on: .replyAccepted).get().next
        XCTAssertEqual(initiator, .ready(Self.here, "i-session"))
        XCTAssertEqual(responder, .ready(Self.here, "r"))
        XCTAssertEqual(responder.next(on: .firstMessage(link: 7, generation: 2)).map(\.next), .failure(.secondHandshake))
    }
}
