import RChatCore
import RChatCrypto
import RChatStore

/// A member of a group as `rchat group members` lists it.
public struct GroupMemberSummary: Equatable, Sendable {
    public let name: String
    public let isAdmin: Bool
    /// "current", "left" or "removed".
    public let state: String
    /// Who vouches for their keys: nil for checked in person (their code entered here), else
    /// the name of the admin whose change added them.
    public let addedBy: String?
    public let isSelf: Bool
}

/// What a command or the view names: a contact's conversation, or a group's. One rule
/// (`AccountService.target(named:)`) for every command that takes either.
public enum ConversationTarget: Sendable {
    case contact(Contact)
    case group(StoredGroup)

    public var conversation: ConversationID {
        switch self {
        case .contact(let c): c.id.conversation
        case .group(let g): g.conversation
        }
    }

    public var name: String {
        switch self {
        case .contact(let c): c.name
        case .group(let g): g.name
        }
    }
}

extension AccountService {
    /// The conversation a command names: a group of that name when no contact has it (both:
    /// refused in one line), else the contact.
    public func target(named name: String) throws(EngineError) -> ConversationTarget {
        if let group = try groupIfNoContact(named: name) { return .group(group) }
        return .contact(try contact(named: name))
    }

    /// The conversation the view has open: a group's, or a contact's.
    public func target(_ conversation: ConversationID) throws(EngineError) -> ConversationTarget {
        if let group = try Self.wrap({ try store.group(conversation) }) { return .group(group) }
        return .contact(try contact(conversation))
    }

    /// The group a command names: exactly one of that name.
    public func group(named name: String) throws(EngineError) -> StoredGroup {
        let found = try Self.wrap { try store.groups(named: name) }
        guard let group = found.first else { throw .usage("no group named \(name) (see rchat list)") }
        guard found.count == 1 else { throw .usage("\(found.count) groups are named \(name): rename one (rchat group rename)") }
        return group
    }

    /// The group a command names when no contact has that name (a contact and a group of
    /// one name: refused in one line); nil when it names no group.
    public func groupIfNoContact(named name: String) throws(EngineError) -> StoredGroup? {
        let groups = try Self.wrap { try store.groups(named: name) }
        guard !groups.isEmpty else { return nil }
        if let contact = try Self.wrap({ try store.contact(named: name) }), !contact.isDeleted {
            throw .usage("a contact and a group are both named \(name): rename one (rchat rename)")
        }
        return try group(named: name)
    }

    /// `rchat group create NAME MEMBER...`: the group's log starts with this account's create
    /// (it the first admin, the others members, each with the contact code it entered for
    /// them), and the create goes to each member as the group's first message.
    @discardableResult
    public func createGroup(name: String, members names: [String]) throws(EngineError) -> StoredGroup {
        guard ContactCode.validName(name) else { throw .usage("a group's " + ContactCode.nameRule) }
        guard !names.isEmpty else { throw .usage("a group needs at least one member besides you") }
        guard names.count < GroupRoster.memberLimit else {
            throw .usage("a group has at most \(GroupRoster.memberLimit) members, you included (\(names.count + 1) asked)")
        }
        var members: [Contact] = [], codes: [ContactCode] = []
        for memberName in names {
            let contact = try contact(named: memberName)
            guard !members.contains(where: { $0.id == contact.id }) else { throw .usage("\(contact.name) is named twice") }
            codes.append(try handedOnCode(of: contact))
            members.append(contact)
        }
        let me = try identity()
        let create = MembershipChange.signed(.create(name: name, members: [try contactCode()] + codes), group: nil, counter: 0, parents: [],
                                             by: me.accountKey)
        guard let log = try? GroupLog(create: create) else { throw .usage("the group could not be made") }
        let t = clock.now()
        let group = try Self.wrap {
            try store.transaction { tx -> StoredGroup in
                let conversation = try tx.insertGroup(groupID: create.id.bytes, name: name, at: t)
                try tx.storeGroupChange(conversation, id: create.id.bytes, bytes: create.change.encoded, taken: true, at: t)
                try Groups.setRoster(conversation, from: log, me: me.accountKey.publicKey, tx, at: t)
                try tx.insertOutgoing(conversation: conversation, id: .fresh(clock), content: .control(.groupChanges([create.change.encoded])),
                                      at: t, keysFingerprints: Dictionary(uniqueKeysWithValues: members.map { ($0.id, Self.keysFingerprint($0)) }))
                return try tx.group(conversation)!
            }
        }
        WakeSignal.poke(home: locations.home)
        return group
    }

    /// The code rChat hands on for a contact: the one entered for them, signed by their
    /// account and carrying the keys pinned for them now.
    private func handedOnCode(of contact: Contact) throws(EngineError) -> ContactCode {
        guard contact.state == .ok, !contact.isBlocked else {
            throw .usage("\(contact.name) cannot be added to a group while blocked, a message request, or with keys that don't match")
        }
        guard let text = contact.code, let code = try? ContactCode(parsing: text), (try? code.verify()) != nil,
              code.accountKey == contact.accountKey, code.deviceKey == contact.deviceKey else {
            throw .usage("rChat holds no contact code of \(contact.name) to hand on to the group's members: "
                         + "enter their code again (rchat add CODE --name \(contact.name))")
        }
        return code
    }

    /// `rchat group add GROUP MEMBER...`: contacts join (an admin's change, all or none); each
    /// gets the whole log with the codes of everyone in it.
    public func addMembers(_ group: StoredGroup, _ names: [String]) throws(EngineError) {
        guard !names.isEmpty else { throw .usage("missing MEMBER (a contact's name)") }
        var codes: [ContactCode] = []
        for name in names {
            let contact = try contact(named: name)
            guard !codes.contains(where: { $0.accountKey == contact.accountKey }) else { throw .usage("\(contact.name) is named twice") }
            codes.append(try handedOnCode(of: contact))
        }
        try change(group, .add(codes))
    }

    /// `rchat group remove GROUP MEMBER`: an admin's change; the member gets it, then nothing more.
    public func removeMember(_ group: StoredGroup, _ name: String) throws(EngineError) {
        let target = try member(named: name, of: group)
        try change(group, .remove(member: target.accountKey), alsoTo: [target.id])
    }

    /// `rchat group leave GROUP`: anyone's change; nothing more is written to the group.
    public func leaveGroup(_ group: StoredGroup) throws(EngineError) { try change(group, .leave) }

    /// `rchat timer GROUP DURATION`: anyone's change; messages written from then on go with it.
    @discardableResult
    public func setTimer(_ timer: DisappearingTimer, for group: StoredGroup) throws(EngineError) -> MessageID {
        try change(group, .timer(seconds: timer.rawValue))
    }

    /// `rchat group rename GROUP NEW`: an admin's change.
    public func renameGroup(_ group: StoredGroup, to name: String) throws(EngineError) {
        guard ContactCode.validName(name) else { throw .usage("a group's " + ContactCode.nameRule) }
        try change(group, .rename(name))
    }

    /// The current member of `group` a command names (a contact's name, or the name a member
    /// met through the group gave themselves).
    private func member(named name: String, of group: StoredGroup) throws(EngineError) -> Contact {
        let key = Contact.nameKey(name)
        let found = try Self.wrap {
            try store.members(group.conversation).filter { $0.state == .current }.compactMap { try store.contact(id: $0.contact) }
                .filter { Contact.nameKey($0.name) == key }
        }
        guard let member = found.first else { throw .usage("no member of \(group.name) is named \(name) (see rchat group members)") }
        guard found.count == 1 else { throw .usage("\(found.count) members of \(group.name) are named \(name)") }
        return member
    }

    /// This account's change to `group`: taken into its log as every member will take it
    /// (refused in one line when the log would not take it: not an admin, not a member), the
    /// roster set, and the log so far sent to every member the roster has now (and
    /// `alsoTo`), the newest change last — a member who just joined can follow it all.
    @discardableResult
    private func change(_ group: StoredGroup, _ action: MembershipChange.Action, alsoTo extra: [ContactID] = []) throws(EngineError) -> MessageID {
        if case .leave = action {
            guard group.state == .current else { throw .usage("you are no longer in \(group.name)") }
        } else {
            try requireWritable(group)
        }
        let me = try identity()
        let t = clock.now()
        let id = MessageID.fresh(clock)
        try Self.wrap {
            try store.transaction { tx in
                guard var log = try Groups.log(group, tx) else { throw EngineError.usage("the log of \(group.name) does not read") }
                let change = MembershipChange.next(action, in: log, by: me.accountKey)
                let outcome = log.receive(change)
                guard case .taken = outcome else { throw EngineError.usage(Self.refusal(outcome, group: group)) }
                if let why = log.ineffective[change.id] { throw EngineError.usage(Self.reason(why, group: group)) }
                try Groups.publish(change, of: log, in: group.conversation, me: me.accountKey.publicKey, id: id, alsoTo: extra, tx, at: t, clock: clock)
            }
        }
        WakeSignal.poke(home: locations.home)
        return id
    }

    /// The log in pieces that each fit one content (255 changes, 60 KiB), in order.
    static func parts(_ changes: [[UInt8]]) -> [[[UInt8]]] {
        var parts: [[[UInt8]]] = [[]], bytes = 0
        for change in changes {
            if parts[parts.count - 1].count == 255 || bytes + change.count + 2 > maximumTextBytes {
                parts.append([])
                bytes = 0
            }
            parts[parts.count - 1].append(change)
            bytes += change.count + 2
        }
        return parts
    }

    private static func refusal(_ outcome: GroupLog.Outcome, group: StoredGroup) -> String {
        guard case .refused(let refusal) = outcome else { return "\(group.name) did not take the change" }
        if case .notPermitted(let why) = refusal { return reason(why, group: group) }
        return "\(group.name) did not take the change: \(refusal)"
    }

    private static func reason(_ why: GroupRoster.Ineffective, group: StoredGroup) -> String {
        switch why {
        case .notAnAdmin: "only an admin of \(group.name) can do that"
        case .notAMember: "you are no longer in \(group.name)"
        case .alreadyAMember: "already a member of \(group.name)"
        case .targetNotAMember: "not a member of \(group.name)"
        case .removesItself: "to go, leave the group: rchat group leave \(group.name)"
        case .overLimit: "\(group.name) would have more than \(GroupRoster.memberLimit) members"
        case .lastAdmin: "\(group.name) would have no admin"
        case .secondCreate: "\(group.name) exists already"
        case .otherDevice: "\(group.name) knows you on another device"
        }
    }

    /// `rchat group members GROUP`: this side first, then the others as the log made them.
    public func groupMembers(_ group: StoredGroup) throws(EngineError) -> [GroupMemberSummary] {
        let me = try identity()
        return try Self.wrap {
            try store.transaction { tx -> [GroupMemberSummary] in
                guard let log = try Groups.log(group, tx) else { return [] }
                var rows: [GroupMemberSummary] = []
                if let mine = log.roster.member(me.accountKey.publicKey) {
                    rows.append(GroupMemberSummary(name: me.name, isAdmin: mine.role == .admin, state: "current", addedBy: nil, isSelf: true))
                } else {
                    rows.append(GroupMemberSummary(name: me.name, isAdmin: false, state: group.state.rawValue, addedBy: nil, isSelf: true))
                }
                for member in try tx.members(group.conversation) {
                    guard let contact = try tx.contact(id: member.contact) else { continue }
                    // The admin who added them, by the key they had then (either may have rekeyed since).
                    let adder = Groups.member(contact, in: log.roster)?.addedBy
                    let vouch: String?
                    if contact.kind == .contact {
                        vouch = nil
                    } else if let adder, adder == me.accountKey.publicKey || adder == me.previous?.key.publicKey
                                || log.roster.member(adder)?.has(me.accountKey.publicKey) == true {
                        vouch = me.name
                    } else if let adder {
                        vouch = try (log.roster.member(adder).map { try Groups.contact(for: $0, tx) } ?? tx.contact(anyAccountKey: adder))?.name ?? "a member"
                    } else {
                        vouch = "a member"
                    }
                    rows.append(GroupMemberSummary(name: contact.name, isAdmin: member.role == .admin, state: member.state.rawValue,
                                                   addedBy: vouch, isSelf: false))
                }
                return rows
            }
        }
    }

    /// `rchat send GROUP TEXT`: one message, a delivery to each current member (Sending each),
    /// then a poke so a running engine sends it to each over their channel.
    public func send(toGroup group: StoredGroup, text: String) throws(EngineError) -> MessageID {
        try send(toGroup: group, content: .text(text))
    }

    /// Text or a reply to a message of the group (`checkQuote`).
    public func send(toGroup group: StoredGroup, content: MessageContent) throws(EngineError) -> MessageID {
        try requireWritable(group)
        try Self.checkWritten(content)
        let id = MessageID.fresh(clock)
        let t = clock.now()
        try Self.wrap {
            try store.transaction { tx in
                try Self.checkQuote(content, in: group.conversation, named: group.name, tx)
                _ = try insertGroupOutgoing(group, id: id, content: content, at: t, tx)
            }
        }
        WakeSignal.poke(home: locations.home)
        return id
    }

    /// What this side may write to `group` now: it is in it and has not blocked it.
    func requireWritable(_ group: StoredGroup) throws(EngineError) {
        guard group.state == .current else { throw .usage("you are no longer in \(group.name)") }
        guard !group.isBlocked else {
            throw .usage("\(group.name) is blocked: nothing is written to it (rchat unblock \(group.name) first)")
        }
    }

    /// A message this side writes to `group`: a delivery to each current member (with their
    /// keys as pinned now, for recovery), and the group's timer.
    func insertGroupOutgoing(_ group: StoredGroup, id: MessageID, content: MessageContent, at t: Int64, _ tx: StoreTransaction,
                             timer: Bool = true) throws -> MessageRowID {
        let members = try tx.members(group.conversation).filter { $0.state == .current }
        guard !members.isEmpty else { throw EngineError.usage("\(group.name) has no other member now") }
        let row = try tx.insertOutgoing(conversation: group.conversation, id: id, content: content, at: t,
                                        keysFingerprints: Self.keysFingerprints(members.map(\.contact), tx))
        if timer { try tx.setExpiry(message: row, after: tx.conversationTimer(group.conversation).timer) }
        return row
    }
}
