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

extension AccountService {
    /// The group a command names: exactly one of that name.
    public func group(named name: String) throws(EngineError) -> StoredGroup {
        let found = try Self.wrap { try store.groups(named: name) }
        guard let group = found.first else { throw .usage("no group named \(name) (see rchat list)") }
        guard found.count == 1 else { throw .usage("\(found.count) groups are named \(name): rename one (rchat group rename)") }
        return group
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
                    let adder = log.roster.member(contact.accountKey)?.addedBy
                    let vouch: String?
                    if contact.kind == .contact {
                        vouch = nil
                    } else if let adder, adder == me.accountKey.publicKey {
                        vouch = me.name
                    } else {
                        vouch = try adder.flatMap { try tx.contact(accountKey: $0)?.name } ?? "a member"
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
        guard group.state == .current else { throw .usage("you are no longer in \(group.name)") }
        let bytes = text.utf8.count
        guard bytes > 0, !text.allSatisfy(\.isWhitespace) else { throw .usage("an empty message is not sent") }
        guard bytes <= Self.maximumTextBytes else {
            throw .usage("the message is too long (\(bytes) bytes; at most \(Self.maximumTextBytes))")
        }
        let id = MessageID.fresh(clock)
        let t = clock.now()
        try Self.wrap {
            try store.transaction { tx in
                let members = try tx.members(group.conversation).filter { $0.state == .current }
                guard !members.isEmpty else { throw EngineError.usage("\(group.name) has no other member now") }
                var fingerprints: [ContactID: [UInt8]] = [:]
                for member in members { if let c = try tx.contact(id: member.contact) { fingerprints[c.id] = Self.keysFingerprint(c) } }
                let row = try tx.insertOutgoing(conversation: group.conversation, id: id, content: .text(text), at: t, keysFingerprints: fingerprints)
                try tx.setExpiry(message: row, after: tx.conversationTimer(group.conversation).timer)
            }
        }
        WakeSignal.poke(home: locations.home)
        return id
    }
}
