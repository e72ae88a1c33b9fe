/// A group, named by the id of the change that created it (`MembershipChange.id`, computed in
/// RChatCrypto): no one can make another group with the same id, so a forged "create"
/// for a group someone belongs to is refused by its id alone.
public struct GroupID: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 32
    public let bytes: [UInt8]

    public init?(_ bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    public init(_ change: ChangeID) { bytes = change.bytes }

    public var description: String { Hex.encode(bytes) }
}

/// One change of a group's membership log, by its hash (BLAKE2b-256 over a label and the
/// change's whole encoding, signature included: RChatCrypto's `MembershipChange.id`). Ordered
/// by its bytes, which breaks ties between concurrent changes of one counter.
public struct ChangeID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let byteCount = 32
    public let bytes: [UInt8]

    public init?(_ bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    public static func < (a: ChangeID, b: ChangeID) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    public var description: String { Hex.encode(bytes.prefix(8)) }

    /// Ids laid end to end (as `StoredGroup.heads` keeps them); a partial id at the end is left out.
    public static func split(_ bytes: [UInt8]) -> [ChangeID] {
        stride(from: 0, to: bytes.count - bytes.count % byteCount, by: byteCount).compactMap { ChangeID(Array(bytes[$0..<$0 + byteCount])) }
    }
}

public enum GroupRole: UInt8, Sendable, CaseIterable {
    case member = 0
    case admin = 1
}

/// One change to a group's roster (DESIGN.md §16; docs/PROTOCOL.md, "Group membership log"),
/// signed by its author's account key and chained to the changes its author had applied (its
/// parents, the log's heads then). Its counter is one more than its parents' highest
/// (a Lamport clock: a change always comes after what it saw), so every member orders the
/// same set of changes the same way: by counter, then by id (`GroupLog`).
///
/// Encoding (integers big-endian, strings u16 length + UTF-8):
///
///     version u8 (1) ‖ kind u8 ‖ [group 32, all but create] ‖ author 32 ‖ counter u64 ‖
///     parents u8 ‖ parent ids 32 each, ascending ‖ body ‖ signature 64
///
/// Bodies: create: name str ‖ codes; add: codes; remove: account key 32; leave: nothing;
/// rename: name str; role: account key 32 ‖ role u8; timer: seconds u32 (0: off); rekey: the
/// author's new contact code (u16 + UTF-8), for another account key than the author's. Codes:
/// count u8 ‖ each member's contact code as text (u16 + UTF-8), so each new member can reach
/// the others and pins the keys their own account signed. A create's first code is its
/// author's own. The decoder takes the one canonical encoding only: anything else (trailing
/// bytes, parents out of order, a code twice, a name or code that does not parse) is refused.
public struct MembershipChange: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        /// The group, its name and its first members: the author (an admin, its own code
        /// first) and the others (members).
        case create(name: String, members: [ContactCode])
        case add([ContactCode])
        case remove(member: [UInt8])
        case leave
        case rename(String)
        case role(member: [UInt8], GroupRole)
        /// The group's disappearing-message timer in seconds (one of `DisappearingTimer`'s), 0 for off.
        case timer(seconds: UInt32)
        /// Its author rotated their account key (`rchat keys rotate`): signed with the key the
        /// roster knows them by, it names the new one in their new code (the same device).
        case rekey(ContactCode)

        var kind: UInt8 {
            switch self {
            case .create: 1
            case .add: 2
            case .remove: 3
            case .leave: 4
            case .rename: 5
            case .role: 6
            case .timer: 7
            case .rekey: 8
            }
        }

        /// Whether only an admin may make it.
        public var needsAdmin: Bool {
            switch self {
            case .create, .add, .remove, .rename, .role: true
            case .leave, .timer, .rekey: false
            }
        }
    }

    public static let version: UInt8 = 1
    public static let signatureLabel = Array("rchat membership change v1".utf8)
    public static let keyBytes = 32
    public static let signatureBytes = 64
    /// Heads one change may name: concurrent branches merge by naming several.
    public static let maxParents = 16
    /// Codes one create or add may carry: a whole group's worth.
    public static let maxCodes = GroupRoster.memberLimit

    /// Nil for a create: the group is named by the create's id.
    public var group: GroupID?
    public var author: [UInt8]
    public var counter: UInt64
    public var parents: [ChangeID]
    public var action: Action
    public var signature: [UInt8]

    public init(group: GroupID?, author: [UInt8], counter: UInt64, parents: [ChangeID], action: Action, signature: [UInt8] = []) {
        self.group = group
        self.author = author
        self.counter = counter
        self.parents = parents.sorted()
        self.action = action
        self.signature = signature
    }

    /// Every field the signature covers, in their order on the wire.
    public var signedFields: [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.u8(Self.version)
        w.u8(action.kind)
        if let group { w.raw(group.bytes) }
        w.raw(author)
        w.u64(counter)
        w.u8(UInt8(clamping: parents.count))
        for parent in parents { w.raw(parent.bytes) }
        switch action {
        case .create(let name, let members):
            w.string(name)
            Self.write(members, &w)
        case .add(let members):
            Self.write(members, &w)
        case .remove(let member):
            w.raw(member)
        case .leave:
            break
        case .rename(let name):
            w.string(name)
        case .role(let member, let role):
            w.raw(member)
            w.u8(role.rawValue)
        case .timer(let seconds):
            w.u32(seconds)
        case .rekey(let code):
            w.string(code.text)
        }
        return w.bytes
    }

    public var encoded: [UInt8] { signedFields + signature }

    private static func write(_ codes: [ContactCode], _ w: inout ByteWriter) {
        w.u8(UInt8(clamping: codes.count))
        for code in codes { w.string(code.text) }
    }

    public enum DecodeError: Error, Equatable, CustomStringConvertible {
        case truncated
        case unsupportedVersion(UInt8)
        case unknownKind(UInt8)
        case badField(String)

        public var description: String {
            switch self {
            case .truncated: "a membership change cut short"
            case .unsupportedVersion(let v): "a membership change of version \(v), which this rChat does not read"
            case .unknownKind(let k): "a membership change of unknown kind \(k)"
            case .badField(let f): "a membership change with an invalid \(f)"
            }
        }
    }

    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        var r = ByteReader(bytes)
        func take<T>(_ read: (inout ByteReader) throws -> T) throws(DecodeError) -> T {
            do { return try read(&r) } catch { throw .truncated }
        }
        let version = try take { try $0.u8() }
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let kind = try take { try $0.u8() }
        guard (1...8).contains(kind) else { throw .unknownKind(kind) }
        group = kind == 1 ? nil : GroupID(try take { try $0.raw(GroupID.byteCount) })
        let author = try take { try $0.raw(Self.keyBytes) }
        self.author = author
        counter = try take { try $0.u64() }
        let parentCount = Int(try take { try $0.u8() })
        guard parentCount <= Self.maxParents else { throw .badField("number of parents") }
        var parents: [ChangeID] = []
        for _ in 0..<parentCount { parents.append(ChangeID(try take { try $0.raw(ChangeID.byteCount) })!) }
        guard zip(parents, parents.dropFirst()).allSatisfy({ $0 < $1 }) else { throw .badField("order of parents") }
        guard (kind == 1) == parents.isEmpty else { throw .badField("parents") }
        guard kind != 1 || counter == 0 else { throw .badField("counter") }
        self.parents = parents
        func name() throws(DecodeError) -> String {
            let raw = try take { try $0.short() }
            guard let text = String(validating: raw, as: UTF8.self), ContactCode.validName(text) else { throw .badField("name") }
            return text
        }
        func code() throws(DecodeError) -> ContactCode {
            let raw = try take { try $0.short() }
            guard let text = String(validating: raw, as: UTF8.self), let code = try? ContactCode(parsing: text), code.text == text
            else { throw .badField("contact code") }
            return code
        }
        func codes(atLeast least: Int) throws(DecodeError) -> [ContactCode] {
            let count = Int(try take { try $0.u8() })
            guard count >= least, count <= Self.maxCodes else { throw .badField("number of members") }
            var codes: [ContactCode] = []
            for _ in 0..<count { codes.append(try code()) }
            guard Set(codes.map { HashedBytes($0.accountKey) }).count == codes.count else { throw .badField("member named twice") }
            return codes
        }
        func key() throws(DecodeError) -> [UInt8] { try take { try $0.raw(Self.keyBytes) } }
        switch kind {
        case 1:
            let groupName = try name()
            let members = try codes(atLeast: 1)
            guard members[0].accountKey == author else { throw .badField("creator's code") }
            action = .create(name: groupName, members: members)
        case 2:
            let members = try codes(atLeast: 1)
            guard !members.contains(where: { $0.accountKey == author }) else { throw .badField("member added by itself") }
            action = .add(members)
        case 3: action = .remove(member: try key())
        case 4: action = .leave
        case 5: action = .rename(try name())
        case 6:
            let member = try key()
            guard let role = GroupRole(rawValue: try take { try $0.u8() }) else { throw .badField("role") }
            action = .role(member: member, role)
        case 7:
            let seconds = try take { try $0.u32() }
            guard DisappearingTimer(rawValue: seconds) != nil else { throw .badField("timer") }
            action = .timer(seconds: seconds)
        default:
            let new = try code()
            guard new.accountKey != author else { throw .badField("new account key (the author's own)") }
            action = .rekey(new)
        }
        signature = try take { try $0.raw(Self.signatureBytes) }
        guard r.isAtEnd else { throw .badField("length (bytes after the signature)") }
    }
}

extension MembershipChange {
    /// What a conversation says the change did, after its author's name: the names the
    /// codes carry for whom it adds (the roster names the others).
    public var summary: String {
        switch action {
        case .create(let name, let members):
            let others = members.dropFirst().map(\.name)
            return "created the group \u{201C}\(name)\u{201D}" + (others.isEmpty ? "" : " with " + Self.list(others))
        case .add(let members): return "added " + Self.list(members.map(\.name))
        case .remove: return "removed a member"
        case .leave: return "left the group"
        case .rename(let name): return "renamed the group \u{201C}\(name)\u{201D}"
        case .role(_, .admin): return "made a member an admin"
        case .role(_, .member): return "made an admin a member"
        case .timer(let seconds):
            guard let phrase = DisappearingTimer(rawValue: seconds)?.phrase else { return "turned off disappearing messages" }
            return "set disappearing messages to \(phrase)"
        case .rekey: return "changed their keys"
        }
    }

    private static func list(_ names: [String]) -> String {
        names.count <= 2 ? names.joined(separator: " and ") : names.dropLast().joined(separator: ", ") + " and " + names.last!
    }
}

/// A change whose signature (and every contact code it carries) RChatCrypto verified, with
/// its id: the only form `GroupLog` takes. Made by `MembershipChange.verified()` there.
public struct VerifiedChange: Equatable, Sendable {
    public let id: ChangeID
    public let change: MembershipChange

    /// For RChatCrypto's verification only: the id must be the change's hash, its signature
    /// checked.
    package init(id: ChangeID, change: MembershipChange) {
        self.id = id
        self.change = change
    }
}
