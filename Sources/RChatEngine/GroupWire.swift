import RChatCore
import RChatCrypto

/// The bodies of a group's envelopes (docs/PROTOCOL.md, "Groups on the wire"): a message to
/// one member over its pairwise session names its group, and so does a receipt for one.
enum GroupWire {
    /// `groupMessage`: the group's id, the timer it was written with (0: none), its content.
    static func messageBody(group: [UInt8], timer: UInt32?, content: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: GroupID.byteCount + 4 + content.count)
        w.raw(group)
        w.u32(timer ?? 0)
        w.raw(content)
        return w.bytes
    }

    /// nil for a body too short to be one.
    static func message(_ body: [UInt8]) -> (group: GroupID, timer: UInt32, content: [UInt8])? {
        var r = ByteReader(body)
        guard let id = try? r.raw(GroupID.byteCount), let group = GroupID(id), let timer = try? r.u32() else { return nil }
        return (group, timer, r.rest())
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
