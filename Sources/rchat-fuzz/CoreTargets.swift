import RChatCore
import RChatCrypto

/// A contact code as pasted: whatever parses prints as a code that parses to the same.
enum ContactCodeTarget: FuzzTarget {
    static let name = "contact-code"

    static func run(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        guard let code = try? ContactCode(parsing: text) else { return }
        precondition((try? ContactCode(parsing: code.text)) == code, "a contact code does not parse back to itself")
        _ = try? code.verify()
    }

    static func seeds() -> [[UInt8]] {
        let code = Fixtures.code("Alice", Fixtures.alice, Fixtures.aliceDevice).text
        // As mail breaks a long line.
        let broken = code.enumerated().map { $0.offset > 0 && $0.offset % 60 == 0 ? "\n\($0.element)" : "\($0.element)" }.joined()
        return [Array(code.utf8), Array(broken.utf8), Array(Fixtures.code("Bob 漢", Fixtures.bob, Fixtures.bobDevice).text.utf8)]
    }
}

/// A message's content after its envelope opened: what decodes encodes to bytes that decode
/// to the same content, and its text is drawn and sanitized for the terminal.
enum MessageContentTarget: FuzzTarget {
    static let name = "message-content"

    static func run(_ input: [UInt8]) {
        guard let content = try? MessageContent(decoding: input) else { return }
        precondition((try? MessageContent(decoding: content.encoded())) == content, "message content does not decode to itself")
        _ = content.description
        // The text as the view and the command lines draw it.
        if let text = content.writtenText {
            _ = TextWidth.drawn(text)
            precondition(TerminalText.isSafe(TerminalText.sanitized(text, breaks: .kept), breaks: .kept), "sanitized text is not safe")
        }
    }

    static func seeds() -> [[UInt8]] {
        let contents: [MessageContent] = [
            .text("hello"),
            .text("line one\nline two, 漢字 and 👍"),
            .attachment(Attachment(kind: .photo, name: "cat.jpg", size: 12_345, contentHash: [UInt8](repeating: 1, count: 32),
                                   key: [UInt8](repeating: 2, count: 32))),
            .attachment(Attachment(kind: .file, name: "notes.txt", size: 3, contentHash: [UInt8](repeating: 3, count: 32),
                                   key: [UInt8](repeating: 4, count: 32))),
            .control(.timerChanged(.oneDay, counter: 1)),
            .control(.timerChanged(.off, counter: 0)),
            .reply(Reply(target: MessageID(high: 0x0189_0000_0000_0001, low: 7), text: "yes, 7 works")),
            .reply(Reply(target: MessageID(high: 1, low: 2), text: "")),
        ]
        return contents.map { $0.encoded() }
    }
}

/// Group membership changes as a member receives them (pieces, `Pieces`): each that decodes
/// encodes to its own bytes; re-signed by Alice or Bob (so the fuzzer reaches the log's rule,
/// not only the signature check), each goes to one log of a group Alice made with Bob, which
/// keeps its invariants whatever comes: at most `memberLimit` members, an admin while anyone
/// is in it, every change taken after its parents, and the same roster when its changes are
/// taken again in another order.
enum MembershipChangeTarget: FuzzTarget {
    static let name = "membership-change"

    static let create = MembershipChange.signed(.create(name: "Friends", members: [Fixtures.code("Alice", Fixtures.alice, Fixtures.aliceDevice),
                                                                                   Fixtures.code("Bob", Fixtures.bob, Fixtures.bobDevice)]),
                                                group: nil, counter: 0, parents: [], by: Fixtures.alice)

    static func run(_ input: [UInt8]) {
        var log = try! GroupLog(create: create)
        var taken: [VerifiedChange] = []
        for piece in Pieces(input) {
            _ = try? MembershipChange.verified(decoding: piece)
            guard var change = try? MembershipChange(decoding: piece) else { continue }
            precondition(change.encoded == piece, "a membership change does not encode to its bytes")
            // Naming what this log does not hold: into this group, after what it holds, when
            // the input says so (its counter's low bit).
            if change.group != nil, !change.parents.allSatisfy({ log.changes[$0] != nil }), change.counter & 1 == 0 {
                change.group = log.group
                change.parents = log.sortedHeads
                change.counter = log.nextCounter
            }
            let author = change.author == Fixtures.bob.publicKey ? Fixtures.bob : Fixtures.alice
            let resigned = MembershipChange.signed(change.action, group: change.group, counter: change.counter, parents: change.parents, by: author)
            if case .taken(let ids) = log.receive(resigned) {
                taken += ids.map { VerifiedChange(id: $0, change: log.changes[$0]!) }
            }
            check(log)
        }
        var again = try! GroupLog(create: create)
        for change in taken.reversed() { _ = again.receive(change) }
        precondition(again.roster == log.roster && again.order == log.order, "the same changes in another order fold to another roster")
    }

    private static func check(_ log: GroupLog) {
        precondition(log.roster.members.count <= GroupRoster.memberLimit, "a roster over the limit")
        precondition(log.roster.members.isEmpty || log.roster.admins > 0, "a group with members and no admin")
        let keys = log.roster.members.flatMap { [$0.accountKey] + $0.formerKeys }
        precondition(Set(keys.map(Hex.encode)).count == keys.count, "one key for two members (or twice for one)")
        for id in log.order {
            precondition(log.changes[id]!.parents.allSatisfy { parent in log.order.firstIndex(of: parent)! < log.order.firstIndex(of: id)! },
                         "a change folded before its parent")
        }
    }

    static func seeds() -> [[UInt8]] {
        var log = try! GroupLog(create: create)
        var pieces: [[UInt8]] = []
        let carol = Fixtures.code("Carol", Fixtures.signingKey(8), Fixtures.signingKey(9))
        for (action, author) in [(MembershipChange.Action.add([carol]), Fixtures.alice), (.role(member: Fixtures.bob.publicKey, .admin), Fixtures.alice),
                                 (.rename("Climbing"), Fixtures.bob), (.timer(seconds: 3600), Fixtures.bob),
                                 (.remove(member: carol.accountKey), Fixtures.bob),
                                 (.leave, Fixtures.alice), (.rekey(Fixtures.code("Bob", Fixtures.signingKey(10), Fixtures.bobDevice)), Fixtures.bob)] {
            let change = MembershipChange.next(action, in: log, by: author)
            _ = log.receive(change)
            pieces.append(change.change.encoded)
        }
        return [Pieces.join(pieces), create.change.encoded, Pieces.join(Array(pieces.reversed()))]
    }
}
