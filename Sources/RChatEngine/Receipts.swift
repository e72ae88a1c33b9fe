import Foundation
import RChatCore
import RChatCrypto
import RChatWire
import RChatStore

/// What the receipts component reaches of the rest of the engine, and nothing else. The
/// component is handed it with every call and holds none of it, as a swift-nio handler is
/// handed its `ChannelHandlerContext`: `Engine` is one (`Engine+Receipts.swift`), a test's
/// stand-in another.
protocol ReceiptContext: ComponentContext {
    /// How long receipts wait to travel together, in seconds (`receipt-window-ms`).
    var receiptWindowSeconds: Double { get }
    /// Whether this run sends receipts at all (`EnginePolicy.sendsReceipts`).
    var sendsReceipts: Bool { get }
    /// The pairwise channel to `contact` in this run, if it has one.
    func channel(_ contact: ContactID) -> PairwiseChannel?
    /// Whether the channel keeps the steady pace now: then its receipts go at its slots' ends.
    func keepsPace(_ channel: PairwiseChannel) -> Bool
    /// Whether the channel's relay is connected and has room for another frame.
    func hasRoom(for channel: PairwiseChannel) -> Bool
    /// Sends what went to the channel's relay without `flush`.
    func flushLink(of channel: PairwiseChannel)
    /// Whether what the store holds of the channel's conversation is on the disk: the sync
    /// of what earlier runs left reported, and no batch that touched it waits for the disk
    /// (`CommitPipeline.isDurable`).
    func isDurable(_ channel: PairwiseChannel) -> Bool
}

/// Delivered, Read and whole-file receipts (docs/ARCHITECTURE.md, "The engine in
/// components"): when they go next (`ReceiptSchedule`: after the receipt window, at once when
/// many are owed, a second after a refusal), what each flush sends, and what the relay's
/// answer to a receipt frame settles. What a session has in flight stays in the channel's
/// `SessionTraffic`, forgotten with the session; the rest it reaches through a `ReceiptContext`.
final class Receipts {
    /// Receipts taken from the store per conversation and kind in one flush, and ids per frame.
    static let perFlush = 4096
    static let perFrame = 1024

    private var timing = ReceiptSchedule()

    /// When receipts go next, if anything asked for them.
    var due: Double? { timing.due }
    var nextDeadline: Double { timing.nextDeadline }

    /// Nothing scheduled until something is owed again (a flush began).
    func taken() { timing.taken() }

    /// Receipts go in small batches: after the window, or at once when many are owed.
    func schedule(urgent: Bool, context: some ReceiptContext) {
        timing.schedule(at: context.ticks + (urgent ? 0 : context.receiptWindowSeconds))
    }

    /// A refused group receipt frame: still owed; go again in a second.
    func retryAfterRefusal(context: some ReceiptContext) { retrySoon(context: context) }

    /// A refused receipt frame: what it carried is still owed; go again in a second.
    private func retrySoon(context: some ReceiptContext) {
        timing.schedule(at: context.ticks + 1)
    }

    /// Sends the receipts owed, up to `perFlush` of each kind per conversation; when more are
    /// owed it comes back at once (a long backlog goes out frame after frame). A channel that
    /// keeps the steady pace sends its receipts at its slots' ends instead
    /// (`SteadyPace.slotFrames`, `sendSlotFrame`), one frame per slot.
    func flush(context: some ReceiptContext) throws(EngineError) {
        timing.taken()
        guard context.sendsReceipts else { return }
        try flushFileReceipts(context: context)
        let pairs = try AccountService.wrap { try context.store.receiptsOwed() }
        let owed = pairs.filter { $0.conversation == $0.author.conversation }.map(\.author)
        var more = false
        for (conversation, author) in pairs where conversation.isGroup {
            guard let channel = context.channel(author) else { continue }
            if try sendGroup(conversation, to: channel, context: context) { more = true }
        }
        for contactID in owed {
            guard let channel = context.channel(contactID) else { continue }
            if context.keepsPace(channel) {
                channel.slotWaiting.receipts = true
                continue
            }
            if try send(channel, frames: nil, context: context).more { more = true }
        }
        if more { schedule(urgent: true, context: context) }
    }

    /// The receipt frame at a steady-pace slot's end: a whole file's Delivered, else one of
    /// Delivered or Read. Whether one went.
    func sendSlotFrame(_ channel: PairwiseChannel, context: some ReceiptContext) throws(EngineError) -> Bool {
        guard context.sendsReceipts else { return false }
        if try sendFileReceipt(channel, context: context) { return true }
        return try send(channel, frames: 1, context: context).sent > 0
    }

    /// Sends the Delivered and Read receipts owed to one channel's contact, up to `frames`
    /// frames (nil: up to `perFlush` of each kind). Returns whether more may be owed than
    /// this took (a long backlog), and how many frames went.
    func send(_ channel: PairwiseChannel, frames: Int?, context: some ReceiptContext) throws(EngineError) -> (more: Bool, sent: Int) {
        let contactID = channel.contact.id
        let store = context.store
        // Only in a session the contact holds: a receipt it cannot read is lost for good.
        guard channel.canSend, var saved = channel.saved, saved.peerHoldsSendingSession, saved.canSeal
        else { return (false, 0) }
        let limit = frames ?? Int.max
        var budget = limit
        var more = false
        // Owed: what this run stored, from memory; else from the store — but not while a
        // batch of this conversation waits for the disk (its messages are in the store,
        // not yet durable; their receipts go once they are).
        let sentThrough = channel.traffic.deliveredInFlight.sentThrough
        let after: Int64
        if let sentThrough { after = sentThrough } else {
            after = try AccountService.wrap { try store.deliveredReceiptedThrough(contact: contactID) }
        }
        var delivered = channel.storedThisRun.owed(after: after, limit: Self.perFlush) ?? []
        if delivered.isEmpty && context.isDurable(channel) {
            delivered = try AccountService.wrap {
                try store.deliveredReceiptsOwed(contact: contactID, after: sentThrough, limit: Self.perFlush)
            }
        }
        var rest = delivered[...]
        while !rest.isEmpty, budget > 0, context.hasRoom(for: channel) {
            let chunk = rest.prefix(Self.perFrame)
            rest = rest.dropFirst(chunk.count)
            guard let envelope = Self.envelope(.receiptDelivered, chunk.map(\.id), &saved, channel, context.clock) else { break }
            let through = chunk.last!.position
            guard let seq = try? context.sendOnLink(channel, .envelope(envelope), as: .deliveredReceipts(contactID, through: through),
                                                    flush: false) else { break }
            channel.traffic.deliveredInFlight.sent(seq: seq, through: through)
            budget -= 1
        }
        // All of this flush went, and more may be owed: come back at once. (A frame that
        // could not go leaves the rest for the session's next start or settle.)
        if rest.isEmpty && delivered.count == Self.perFlush { more = true }
        if !rest.isEmpty && budget == 0 { more = true }
        if budget > 0 {
            let read = try AccountService.wrap { try store.readReceiptsOwed(contact: contactID, limit: Self.perFlush) }
                .filter { !channel.traffic.readReceiptsInFlight.contains($0) }
            var readRest = read[...]
            while !readRest.isEmpty, budget > 0, context.hasRoom(for: channel) {
                let chunk = Array(readRest.prefix(Self.perFrame))
                readRest = readRest.dropFirst(chunk.count)
                guard let envelope = Self.envelope(.receiptRead, chunk, &saved, channel, context.clock) else { break }
                guard (try? context.sendOnLink(channel, .envelope(envelope), as: .readReceipts(contactID, chunk), flush: false)) != nil
                else { break }
                channel.traffic.readReceiptsInFlight.formUnion(chunk)
                budget -= 1
            }
            if !readRest.isEmpty && budget == 0 { more = true }
        }
        channel.saved = saved
        context.flushLink(of: channel)
        return (more, limit - budget)
    }

    // MARK: receipts for a group's messages

    /// The Delivered and Read receipts owed to the channel's contact for what they wrote in
    /// the group `conversation`, in frames naming the group (`GroupWire.receiptBody`), in the
    /// session the contact holds. What is in flight waits for its answer (`SessionTraffic`'s
    /// group marks, forgotten with the session). Whether more may be owed than this took.
    private func sendGroup(_ conversation: ConversationID, to channel: PairwiseChannel, context: some ReceiptContext) throws(EngineError) -> Bool {
        let author = channel.contact.id, store = context.store
        guard channel.canSend, var saved = channel.saved, saved.peerHoldsSendingSession, saved.canSeal,
              let group = try AccountService.wrap({ try store.group(conversation) }) else { return false }
        let inFlight = channel.traffic.groupDeliveredInFlight[conversation]
        var more = false
        if inFlight == nil {
            let owed = try AccountService.wrap {
                try store.deliveredReceiptsOwed(conversation: conversation, author: author, after: nil, limit: Self.perFrame)
            }
            if let last = owed.last, context.hasRoom(for: channel),
               let envelope = Self.groupEnvelope(.groupReceiptDelivered, group.groupID, owed.map(\.id), &saved, channel, context.clock) {
                if (try? context.sendOnLink(channel, .envelope(envelope), as: .groupDeliveredReceipts(author, conversation, through: last.position),
                                            flush: false)) != nil {
                    channel.traffic.groupDeliveredInFlight[conversation] = last.position
                    more = owed.count == Self.perFrame
                }
            }
        }
        let read = try AccountService.wrap { try store.readReceiptsOwed(conversation: conversation, author: author, limit: Self.perFrame) }
            .filter { !channel.traffic.readReceiptsInFlight.contains($0) }
        if !read.isEmpty, context.hasRoom(for: channel),
           let envelope = Self.groupEnvelope(.groupReceiptRead, group.groupID, read, &saved, channel, context.clock) {
            if (try? context.sendOnLink(channel, .envelope(envelope), as: .groupReadReceipts(author, conversation, read), flush: false)) != nil {
                channel.traffic.readReceiptsInFlight.formUnion(read)
            }
        }
        channel.saved = saved
        context.flushLink(of: channel)
        return more
    }

    /// A group receipt envelope: the group's id, then the ids as a receipt carries them.
    static func groupEnvelope(_ kind: EnvelopeKind, _ group: [UInt8], _ ids: [MessageID], _ saved: inout SavedSessionState,
                              _ channel: PairwiseChannel, _ clock: any Clock) -> [UInt8]? {
        saved.seal(kind: kind, messageID: .fresh(clock), body: GroupWire.receiptBody(group: group, ids: ids), conversation: channel.secret)
    }

    // MARK: receipts for whole files

    /// Delivered receipts for whole files, in the sessions the contacts hold (at the steady
    /// pace's next slot's end where it runs: `sendSlotFrame`).
    private func flushFileReceipts(context: some ReceiptContext) throws(EngineError) {
        let owed = try AccountService.wrap { try context.store.authorsOwedFileReceipts() }
        for contactID in owed {
            guard let channel = context.channel(contactID) else { continue }
            if context.keepsPace(channel) {
                channel.slotWaiting.receipts = true
                continue
            }
            try sendFileReceipt(channel, context: context)
        }
    }

    /// One frame of the whole-file receipts owed to this channel's contact; whether it went.
    @discardableResult
    private func sendFileReceipt(_ channel: PairwiseChannel, context: some ReceiptContext) throws(EngineError) -> Bool {
        let contactID = channel.contact.id
        guard channel.canSend, var saved = channel.saved, saved.peerHoldsSendingSession, saved.canSeal,
              context.hasRoom(for: channel) else { return false }
        let ids = try AccountService.wrap { try context.store.fileReceiptsOwed(author: contactID, limit: Self.perFrame) }
            .filter { !channel.traffic.fileReceiptsInFlight.contains($0) }
        guard !ids.isEmpty, let envelope = Self.envelope(.fileDelivered, ids, &saved, channel, context.clock) else { return false }
        channel.saved = saved
        guard (try? context.sendOnLink(channel, .envelope(envelope), as: .fileReceipts(contactID, ids), flush: true)) != nil
        else { return false }
        channel.traffic.fileReceiptsInFlight.formUnion(ids)
        return true
    }

    /// A receipt envelope: the count of ids, then the ids.
    static func envelope(_ kind: EnvelopeKind, _ ids: [MessageID], _ saved: inout SavedSessionState,
                         _ channel: PairwiseChannel, _ clock: any Clock) -> [UInt8]? {
        var body = ByteWriter(capacity: 2 + ids.count * MessageID.byteCount)
        body.u16(UInt16(ids.count))
        for id in ids { body.raw(id) }
        return saved.seal(kind: kind, messageID: .fresh(clock), body: body.bytes, conversation: channel.secret)
    }

    // MARK: what the relay's answers settle

    /// The relay took whole-file receipts: no longer owed.
    func fileReceiptsTaken(_ contactID: ContactID, _ ids: [MessageID], _ tx: StoreTransaction,
                           context: some ReceiptContext) throws {
        try tx.settleFileReceipts(author: contactID, ids: ids)
        context.channel(contactID)?.traffic.fileReceiptsInFlight.subtract(ids)
    }

    /// The relay took Delivered receipt frame `seq`: the store's mark moves over every frame
    /// taken with nothing earlier still open (`DeliveredReceiptsInFlight`).
    func deliveredReceiptsTaken(_ contactID: ContactID, seq: UInt64, _ tx: StoreTransaction,
                                context: some ReceiptContext) throws {
        if let mark = context.channel(contactID)?.traffic.deliveredInFlight.taken(seq: seq) {
            try tx.settleDeliveredReceipts(contact: contactID, through: mark)
        }
    }

    func readReceiptsTaken(_ contactID: ContactID, _ ids: [MessageID], _ tx: StoreTransaction,
                           context: some ReceiptContext) throws {
        try tx.settleReadReceipts(contact: contactID, ids: ids)
        context.channel(contactID)?.traffic.readReceiptsInFlight.subtract(ids)
    }

    /// What a receipt frame carried.
    enum Frame {
        case delivered
        case read([MessageID])
        case files([MessageID])
    }

    /// The relay refused a receipt frame: what it carried is still owed in the store and goes
    /// again in a second. A refused Delivered frame sends every Delivered receipt not settled
    /// again, from the store's mark.
    func refused(_ frame: Frame, to contactID: ContactID, context: some ReceiptContext) {
        let channel = context.channel(contactID)
        switch frame {
        case .delivered: channel?.traffic.deliveredInFlight.forgetAll()
        case .read(let ids): channel?.traffic.readReceiptsInFlight.subtract(ids)
        case .files(let ids): channel?.traffic.fileReceiptsInFlight.subtract(ids)
        }
        retrySoon(context: context)
    }
}

extension RelayCompletion {
    /// Delivered receipts for `author`'s messages in a group, up to `through`: the member's
    /// mark in that conversation moves there.
    static func groupDeliveredReceipts(_ author: ContactID, _ conversation: ConversationID, through: Int64) -> RelayCompletion {
        RelayCompletion(recordsNothing: false, taken: { engine, _, batch, tx in
            try tx.settleDeliveredReceipts(conversation: conversation, author: author, through: through)
            engine.channels[author]?.traffic.groupDeliveredInFlight[conversation] = nil
            batch.receiptsSettled = true
        }, refused: { engine, _, _, _ in
            engine.channels[author]?.traffic.groupDeliveredInFlight[conversation] = nil
            engine.receipts.retryAfterRefusal(context: engine)
        })
    }

    static func groupReadReceipts(_ author: ContactID, _ conversation: ConversationID, _ ids: [MessageID]) -> RelayCompletion {
        RelayCompletion(recordsNothing: false, taken: { engine, _, batch, tx in
            try tx.settleReadReceipts(conversation: conversation, ids: ids)
            engine.channels[author]?.traffic.readReceiptsInFlight.subtract(ids)
            batch.receiptsSettled = true
        }, refused: { engine, _, _, _ in
            engine.channels[author]?.traffic.readReceiptsInFlight.subtract(ids)
            engine.receipts.retryAfterRefusal(context: engine)
        })
    }

    /// Delivered receipts for whole files.
    static func fileReceipts(_ contactID: ContactID, _ ids: [MessageID]) -> RelayCompletion {
        RelayCompletion(recordsNothing: false, taken: { engine, _, _, tx in
            try engine.receipts.fileReceiptsTaken(contactID, ids, tx, context: engine)
        }, refused: { engine, _, _, _ in
            engine.receipts.refused(.files(ids), to: contactID, context: engine)
        })
    }

    /// Delivered receipts for the contact's incoming messages up to `through` (the frame's
    /// place among those in flight is its sequence number: `DeliveredReceiptsInFlight`).
    static func deliveredReceipts(_ contactID: ContactID, through _: Int64) -> RelayCompletion {
        RelayCompletion(recordsNothing: false, taken: { engine, seq, batch, tx in
            try engine.receipts.deliveredReceiptsTaken(contactID, seq: seq, tx, context: engine)
            batch.receiptsSettled = true
        }, refused: { engine, _, _, _ in
            engine.receipts.refused(.delivered, to: contactID, context: engine)
        })
    }

    static func readReceipts(_ contactID: ContactID, _ ids: [MessageID]) -> RelayCompletion {
        RelayCompletion(recordsNothing: false, taken: { engine, _, batch, tx in
            try engine.receipts.readReceiptsTaken(contactID, ids, tx, context: engine)
            batch.receiptsSettled = true
        }, refused: { engine, _, _, _ in
            engine.receipts.refused(.read(ids), to: contactID, context: engine)
        })
    }
}
