/// Who is in a group, as its log's changes folded in order make it: a pure value.
public struct GroupRoster: Equatable, Sendable {
    /// Members a group may have (its creator included).
    public static let memberLimit = 100

    public struct Member: Equatable, Sendable {
        public var code: ContactCode
        public var role: GroupRole
        /// The account key of the admin whose change brought it in (its own for the creator).
        public let addedBy: [UInt8]
        /// The account keys it had before its rekeys, the oldest (the one it joined with) first.
        public var formerKeys: [[UInt8]] = []
        /// The key it signs with now.
        public var accountKey: [UInt8] { code.accountKey }
        /// The key it joined with: the create's or add's code named it so.
        public var joinedAs: [UInt8] { formerKeys.first ?? code.accountKey }
        /// Whether `key` is this member's, now or before a rekey (a change made before it by
        /// someone who had not seen it names them so; a contact pinned before it knows them so).
        public func has(_ key: [UInt8]) -> Bool { code.accountKey == key || formerKeys.contains(key) }
    }

    public var name: String
    /// In the order they joined: the longest-standing first.
    public var members: [Member]
    public var timerSeconds: UInt32 = 0

    /// The member whose key `accountKey` is, now or before a rekey.
    public func member(_ accountKey: [UInt8]) -> Member? { members.first { $0.has(accountKey) } }
    public func isMember(_ accountKey: [UInt8]) -> Bool { member(accountKey) != nil }
    public func isAdmin(_ accountKey: [UInt8]) -> Bool { member(accountKey)?.role == .admin }
    /// Only the key a member signs with now makes a change: one made with a key they had
    /// before a rekey (a copy of it elsewhere) changes nothing.
    public func author(_ accountKey: [UInt8]) -> Member? { members.first { $0.accountKey == accountKey } }
    public var admins: Int { members.count { $0.role == .admin } }

    /// Why a change that was taken into the log changed nothing where it stands in the order
    /// (a concurrent change before it took its author's rights, its target, or the room).
    public enum Ineffective: Error, Equatable, Sendable, CustomStringConvertible {
        case notAMember
        case notAnAdmin
        case alreadyAMember
        case targetNotAMember
        /// An admin removes itself by leaving.
        case removesItself
        case overLimit
        /// The group would keep no admin.
        case lastAdmin
        case secondCreate
        /// A rekey for another device than the one the roster has for its author.
        case otherDevice

        public var description: String {
            switch self {
            case .notAMember: "its author is not a member"
            case .notAnAdmin: "its author is not an admin"
            case .alreadyAMember: "it adds someone who is a member already"
            case .targetNotAMember: "it names someone who is not a member"
            case .removesItself: "its author removes itself (a member leaves instead)"
            case .overLimit: "the group would have more than \(GroupRoster.memberLimit) members"
            case .lastAdmin: "the group would have no admin"
            case .secondCreate: "the group was created already"
            case .otherDevice: "it names another device than its author's"
            }
        }
    }

    /// The roster after `change` by `author`, or why it changes nothing. A create only
    /// starts a roster (`init(creating:)`).
    public func applying(_ change: MembershipChange) -> Result<GroupRoster, Ineffective> {
        let author = change.author
        guard let me = self.author(author) else { return .failure(.notAMember) }
        if change.action.needsAdmin, me.role != .admin { return .failure(.notAnAdmin) }
        var next = self
        switch change.action {
        case .create:
            return .failure(.secondCreate)
        case .add(let codes):
            guard !codes.contains(where: { isMember($0.accountKey) }) else { return .failure(.alreadyAMember) }
            guard members.count + codes.count <= Self.memberLimit else { return .failure(.overLimit) }
            next.members += codes.map { Member(code: $0, role: .member, addedBy: author) }
        case .remove(let target):
            guard let removed = member(target) else { return .failure(.targetNotAMember) }
            guard removed.accountKey != author else { return .failure(.removesItself) }
            next.members.removeAll { $0.has(target) }
        case .leave:
            next.members.removeAll { $0.accountKey == author }
            // Its last admin gone, the group is not left without one: the longest-standing
            // member is one now (every member makes the same choice).
            if next.admins == 0, !next.members.isEmpty { next.members[0].role = .admin }
        case .rename(let name):
            next.name = name
        case .role(let target, let role):
            guard let index = members.firstIndex(where: { $0.has(target) }) else { return .failure(.targetNotAMember) }
            next.members[index].role = role
            if next.admins == 0 { return .failure(.lastAdmin) }
        case .timer(let seconds):
            next.timerSeconds = seconds
        case .rekey(let code):
            // The same device, vouched for by the new key: a copy of the old key elsewhere
            // cannot move the member to a device of its own.
            guard code.deviceKey == me.code.deviceKey else { return .failure(.otherDevice) }
            guard !isMember(code.accountKey) else { return .failure(.alreadyAMember) }
            let index = members.firstIndex { $0.accountKey == author }!
            next.members[index].formerKeys.append(author)
            next.members[index].code = code
        }
        return .success(next)
    }

    /// The roster a create starts: its author an admin, the others members.
    public init?(creating change: MembershipChange) {
        guard case .create(let name, let codes) = change.action, codes.first?.accountKey == change.author,
              codes.count <= Self.memberLimit else { return nil }
        self.name = name
        members = codes.enumerated().map { Member(code: $1, role: $0 == 0 ? .admin : .member, addedBy: change.author) }
    }
}

/// A group's membership log as one member holds it (DESIGN.md §16): every change it took,
/// those waiting for a parent not seen yet, and the roster they fold to. A pure value: every
/// member that holds the same changes holds the same roster, whatever order they came in
/// and whatever partition kept them apart.
///
/// - A change is taken when its parents are all taken, its counter is one more than their
///   highest, and its author had the right to make it in the roster its parents fold to
///   (what its author saw). Otherwise it is refused: never stored, never shown.
/// - The roster is every taken change folded in one order, by counter then id: a concurrent
///   change that comes first may leave a later one without effect (an admin removed before
///   its add): that one stays in the log, changing nothing (`ineffective`).
/// - A change whose parents are not all here waits, a bounded number of them.
public struct GroupLog: Sendable {
    public static let maxWaiting = 256
    public static let maxChanges = 10_000

    public let group: GroupID
    public private(set) var changes: [ChangeID: MembershipChange] = [:]
    public private(set) var waiting: [ChangeID: MembershipChange] = [:]
    /// Taken changes that no other taken change names as a parent.
    public private(set) var heads: Set<ChangeID> = []
    public private(set) var roster: GroupRoster
    /// Taken changes that changed nothing where they stand, and why.
    public private(set) var ineffective: [ChangeID: GroupRoster.Ineffective] = [:]
    /// Taken changes in the order they fold.
    public private(set) var order: [ChangeID] = []

    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        case otherGroup
        case notACreate
        case counter
        /// Its author had no right to it in the roster it saw.
        case notPermitted(GroupRoster.Ineffective)
        case tooManyWaiting
        case tooManyChanges

        public var description: String {
            switch self {
            case .otherGroup: "it is for another group"
            case .notACreate: "a group starts with its create"
            case .counter: "its counter is not one more than its parents'"
            case .notPermitted(let why): "its author could not make it: \(why)"
            case .tooManyWaiting: "too many changes wait for changes not seen"
            case .tooManyChanges: "the group's log is full"
            }
        }
    }

    public enum Outcome: Equatable, Sendable {
        /// Taken, with the waiting changes it let in (in the order they were taken).
        case taken([ChangeID])
        /// Its parents are not all here yet.
        case waiting
        /// Held already (taken or waiting): nothing changes.
        case replay
        case refused(Refusal)
    }

    /// A log holding only its create.
    public init(create: VerifiedChange) throws(Refusal) {
        guard create.change.group == nil, let roster = GroupRoster(creating: create.change) else { throw .notACreate }
        group = GroupID(create.id)
        self.roster = roster
        changes[create.id] = create.change
        heads = [create.id]
        order = [create.id]
    }

    /// A log as it was kept: `taken` were each checked when they were taken (none is checked
    /// again), `waiting` still wait for a parent; the roster folded once. Rebuilding a kept
    /// log by taking its changes one by one checked each against what its author saw again,
    /// a fold per change.
    public init(restoring create: VerifiedChange, taken: [VerifiedChange], waiting: [VerifiedChange]) throws(Refusal) {
        try self.init(create: create)
        for change in taken where change.id != create.id && change.change.group == group {
            changes[change.id] = change.change
        }
        heads = Set(changes.keys).subtracting(changes.values.flatMap(\.parents))
        for change in waiting where changes[change.id] == nil { self.waiting[change.id] = change.change }
        fold()
    }

    /// The current members whose joining — the create or the add that last brought them in —
    /// the author of change `id` had not seen when they made it (not among its ancestors):
    /// the author sent it to the members they saw, so these have not had it from them. The
    /// one who added each of them hands it on (`Groups.receiveChanges`).
    public func membersUnseen(by id: ChangeID) -> [[UInt8]] {
        guard let change = changes[id] else { return [] }
        let ancestors = ancestors(of: change.parents)
        var joined: [[UInt8]: ChangeID] = [:]
        for cid in order where ineffective[cid] == nil {
            switch changes[cid]?.action {
            case .create(_, let members)?: for m in members { joined[m.accountKey] = cid }
            case .add(let codes)?: for m in codes { joined[m.accountKey] = cid }
            default: break
            }
        }
        return roster.members.filter { member in
            !member.has(change.author) && joined[member.joinedAs].map { $0 != id && !ancestors.contains($0) } == true
        }.map(\.accountKey)
    }

    // MARK: comparing logs by their heads (anti-entropy, not wired to the wire yet)

    /// Of another member's heads, those this log has not taken: it lacks a change they hold
    /// (a change it holds waiting counts as lacking, as its parents are not all here).
    public func unknown(_ theirHeads: [ChangeID]) -> [ChangeID] {
        theirHeads.filter { changes[$0] == nil }
    }

    /// The taken changes a member whose log has `theirHeads` does not hold — every change
    /// here that is not one of their heads' ancestors (or a head) — in the order they fold,
    /// so a receiver takes them parent first. Their heads this log does not know tell
    /// nothing of what they hold below them, so those count for nothing: what is sent may
    /// then include changes they hold, which they take as replays.
    public func missing(from theirHeads: [ChangeID]) -> [ChangeID] {
        let theirs = ancestors(of: theirHeads.filter { changes[$0] != nil })
        return order.filter { !theirs.contains($0) }
    }

    /// Whether this log took `member` out of the group (an effective removal of them, or
    /// their leave) by a change below none of `heads`: one who wrote at those heads had not
    /// seen it, so what they wrote may come here after it and be dropped, as the roster here
    /// says (a message written as an admin removed its author at the same time).
    public func tookOut(_ member: [UInt8], unseenAt heads: [ChangeID]) -> Bool {
        let seen = ancestors(of: heads), keys = keys(linkedTo: member)
        return order.contains { id in
            guard !seen.contains(id), ineffective[id] == nil, let change = changes[id] else { return false }
            switch change.action {
            case .remove(let removed): return keys.contains(removed)
            case .leave: return keys.contains(change.author)
            default: return false
            }
        }
    }

    /// `key` and every key a rekey in this log links to it, before or after.
    public func keys(linkedTo key: [UInt8]) -> Set<[UInt8]> {
        var keys: Set<[UInt8]> = [key], grew = true
        let links = order.compactMap { id -> ([UInt8], [UInt8])? in
            guard let change = changes[id], case .rekey(let code) = change.action, ineffective[id] == nil else { return nil }
            return (change.author, code.accountKey)
        }
        while grew {
            grew = false
            for (old, new) in links where keys.contains(old) != keys.contains(new) {
                keys.insert(old)
                keys.insert(new)
                grew = true
            }
        }
        return keys
    }

    /// The parents a change made now names: the heads (as many as a change may name; the
    /// rest merge at the next change).
    public var sortedHeads: [ChangeID] { Array(heads.sorted().prefix(MembershipChange.maxParents)) }
    /// And its counter: one more than theirs.
    public var nextCounter: UInt64 { (sortedHeads.compactMap { changes[$0]?.counter }.max() ?? 0) + 1 }

    /// Takes `change` (and what waited for it), or says why not.
    public mutating func receive(_ verified: VerifiedChange) -> Outcome {
        let id = verified.id, change = verified.change
        guard changes[id] == nil, waiting[id] == nil else { return .replay }
        guard change.group == group else { return .refused(change.group == nil ? .notPermitted(.secondCreate) : .otherGroup) }
        guard change.parents.allSatisfy({ changes[$0] != nil }) else {
            guard waiting.count < Self.maxWaiting else { return .refused(.tooManyWaiting) }
            waiting[id] = change
            return .waiting
        }
        if let refusal = admit(id, change) { return .refused(refusal) }
        var taken = [id]
        // What waited for it may be complete now (and what waited for those).
        var progress = true
        while progress {
            progress = false
            for (waitingID, next) in waiting.sorted(by: { $0.key < $1.key }) where next.parents.allSatisfy({ changes[$0] != nil }) {
                waiting[waitingID] = nil
                if admit(waitingID, next) == nil { taken.append(waitingID) }
                progress = true
            }
        }
        fold()
        return .taken(taken)
    }

    /// Checks a change whose parents are all taken against what its author saw, and takes it.
    private mutating func admit(_ id: ChangeID, _ change: MembershipChange) -> Refusal? {
        guard changes.count < Self.maxChanges else { return .tooManyChanges }
        let parentCounter = change.parents.compactMap { changes[$0]?.counter }.max() ?? 0
        guard change.counter == parentCounter + 1 else { return .counter }
        if case .failure(let why) = Self.fold(changes, from: ancestors(of: change.parents)).roster.applying(change) {
            return .notPermitted(why)
        }
        changes[id] = change
        heads.subtract(change.parents)
        heads.insert(id)
        return nil
    }

    /// `parents` themselves and every taken change they name, and theirs, down to the create.
    private func ancestors(of parents: [ChangeID]) -> Set<ChangeID> {
        var seen = Set<ChangeID>(), stack = parents
        while let next = stack.popLast() {
            guard seen.insert(next).inserted, let change = changes[next] else { continue }
            stack.append(contentsOf: change.parents)
        }
        return seen
    }

    private mutating func fold() {
        let folded = Self.fold(changes, from: Set(changes.keys))
        roster = folded.roster
        ineffective = folded.ineffective
        order = folded.order
    }

    /// The roster `ids` fold to, by counter then id (a Lamport order: a change comes after
    /// every change it names).
    private static func fold(_ changes: [ChangeID: MembershipChange], from ids: Set<ChangeID>)
        -> (roster: GroupRoster, ineffective: [ChangeID: GroupRoster.Ineffective], order: [ChangeID]) {
        let order = ids.sorted { a, b in
            let ca = changes[a]!.counter, cb = changes[b]!.counter
            return ca != cb ? ca < cb : a < b
        }
        var roster: GroupRoster?, ineffective: [ChangeID: GroupRoster.Ineffective] = [:]
        for id in order {
            let change = changes[id]!
            guard let current = roster else {
                roster = GroupRoster(creating: change)
                continue
            }
            switch current.applying(change) {
            case .success(let next): roster = next
            case .failure(let why): ineffective[id] = why
            }
        }
        return (roster!, ineffective, order)
    }
}
