import RChatCore
import RChatCrypto

/// The bodies of a group's envelopes (docs/PROTOCOL.md, "Groups on the wire"): a message to
/// one member over its pairwise session names its group, and so does a receipt for one.
enum GroupWire {
    /// `groupMessage`: the group's id, the timer it was written with (0: none), the heads of
    /// its author's log when it was sealed (a u8 count, at most 16, then 32 bytes each), its
    /// content.
    static func messageBody(group: [UInt8], timer: UInt32?, heads: [UInt8], content: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: GroupID.byteCount + 5 + heads.count + content.count)
        w.raw(group)
        w.u32(timer ?? 0)
        w.u8(UInt8(heads.count / ChangeID.byteCount))
        w.raw(heads)
        w.raw(content)
        return w.bytes
    }

    /// nil for a body too short to be one, or with more heads than a log gives.
    static func message(_ body: [UInt8]) -> (group: GroupID, timer: UInt32, heads: [ChangeID], content: [UInt8])? {
        var r = ByteReader(body)
        guard let id = try? r.raw(GroupID.byteCount), let group = GroupID(id), let timer = try? r.u32(),
              let heads = heads(&r) else { return nil }
        return (group, timer, heads, r.rest())
    }

    /// At most this many ids in a `groupSync` (it fits one envelope): a longer log names its
    /// newest changes, whose ancestors count as held.
    static let maxSyncIDs = 1_800

    /// `groupSync`: the group's id, then the changes the sender's log holds (u16 count, 32
    /// bytes each). Sent, not stored, to a member whose heads differ from the sender's: they
    /// hand on exactly what it lacks, and ask back if it holds what they lack.
    static func syncBody(group: [UInt8], ids: [ChangeID]) -> [UInt8] {
        let ids = ids.suffix(maxSyncIDs)
        var w = ByteWriter(capacity: GroupID.byteCount + 2 + ids.count * ChangeID.byteCount)
        w.raw(group)
        w.u16(UInt16(ids.count))
        for id in ids { w.raw(id.bytes) }
        return w.bytes
    }

    /// nil unless the body is a group id and at most `maxSyncIDs` ids, nothing after them.
    static func sync(_ body: [UInt8]) -> (group: GroupID, ids: [ChangeID])? {
        var r = ByteReader(body)
        guard let id = try? r.raw(GroupID.byteCount), let group = GroupID(id), let count = try? r.u16(),
              Int(count) <= maxSyncIDs else { return nil }
        var ids: [ChangeID] = []
        for _ in 0..<count {
            guard let bytes = try? r.raw(ChangeID.byteCount), let change = ChangeID(bytes) else { return nil }
            ids.append(change)
        }
        return r.isAtEnd ? (group, ids) : nil
    }

    /// `groupHeads`: the group's id, then the heads of the sender's log (a u8 count, at most
    /// 16, then 32 bytes each). Sent, not stored, at each session with a member: logs that
    /// differ compare themselves (a `groupSync`) even while nobody writes.
    static func headsBody(group: [UInt8], heads: [UInt8]) -> [UInt8] {
        group + [UInt8(heads.count / ChangeID.byteCount)] + heads
    }

    /// nil unless the body is a group id and at most 16 heads, nothing after them.
    static func heads(_ body: [UInt8]) -> (group: GroupID, heads: [ChangeID])? {
        var r = ByteReader(body)
        guard let id = try? r.raw(GroupID.byteCount), let group = GroupID(id), let heads = heads(&r), r.isAtEnd else { return nil }
        return (group, heads)
    }

    private static func heads(_ r: inout ByteReader) -> [ChangeID]? {
        guard let count = try? r.u8(), Int(count) <= MembershipChange.maxParents else { return nil }
        var heads: [ChangeID] = []
        for _ in 0..<count {
            guard let bytes = try? r.raw(ChangeID.byteCount), let head = ChangeID(bytes) else { return nil }
            heads.append(head)
        }
        return heads
    }

    /// `groupReceiptDelivered`, `groupReceiptRead`: the group's id, then the ids as a
    /// one-to-one receipt carries them.
    static func receiptBody(group: [UInt8], ids: [MessageID]) -> [UInt8] {
        var w = ByteWriter(capacity: GroupID.byteCount + 2 + ids.count * MessageID.byteCount)
        w.raw(group)
        w.u16(UInt16(ids.count))
        for id in ids { w.raw(id) }
        return w.bytes
    }

    /// nil unless the body is a group id and a well-formed list of ids.
    static func receipt(_ body: [UInt8]) -> (group: GroupID, ids: [MessageID])? {
        guard body.count >= GroupID.byteCount + 2, let group = GroupID(Array(body.prefix(GroupID.byteCount))) else { return nil }
        let rest = Array(body.dropFirst(GroupID.byteCount))
        let ids = Engine.receiptIDs(rest)
        guard !ids.isEmpty || rest == [0, 0] else { return nil }
        return (group, ids)
    }
}
