import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import RChatStore

/// What the outbox component reaches of the rest of the engine, and nothing else. The
/// component is handed it with every call and holds none of it, as a swift-nio handler is
/// handed its `ChannelHandlerContext`: `Engine` is one (`Engine+Outbox.swift`), a test's
/// stand-in another.
protocol OutboxContext: ComponentContext, SealsItems {
    /// Whether this run sends messages at all (`EnginePolicy.sends`).
    var sendsMessages: Bool { get }
    /// Seconds the relay may take to answer a message before it is Not confirmed
    /// (`acknowledgement-timeout`).
    var acknowledgementSeconds: Double { get }
    /// Whether the channel keeps the steady pace now: then a file's chunks go one per slot.
    func keepsPace(_ channel: PairwiseChannel) -> Bool
    /// The client of the relay at `address`, while it is connected.
    func connectedRelay(_ address: RelayAddress) -> (any RelayLink)?
    /// Seals `request` to the contact and hands it to the relay at `address` for the mailbox of
    /// `token`, without flushing; the relay's answer runs `completion`. Whether it was handed over.
    func sendRequest(_ request: MessageRequest, to contact: Contact, token: InviteToken, at address: RelayAddress,
                     as completion: RelayCompletion) -> Bool
    /// This account's contact code, which a message request carries.
    var ownContactCode: String { get }
    /// Sends an attachment's item and the chunks that may go now (`Transfers.sendAttachment`);
    /// false when it stopped for lack of room.
    func sendAttachment(_ item: OutboxItem, _ channel: PairwiseChannel, _ saved: inout SavedSessionState,
                        client: any RelayLink, deadline: Double, chunks: inout Int?) throws(EngineError) -> Bool
    /// Records what each file being sent waits for (`Transfers.noteUploadWaits`).
    func noteUploadWaits(_ channel: PairwiseChannel, _ files: [MessageRowID])
    /// A change a view should show.
    func emit(_ event: ChatEvent)
}

/// The outbox (docs/ARCHITECTURE.md, "The engine in components"): what the store holds to
/// send to each contact goes out as far as it can now — on the session if there is one; as
/// message requests if the conversation never had one; otherwise it waits, Sending, until
/// both sides are online. Its deadline is the sweep of what a refusal postponed
/// (`OutboxSweep`); the rest of the time it is flushed by the events that may let something
/// go (a session, room at the relay, a new message, a resend).
final class Outbox {
    private var sweep: OutboxSweep

    init(startedAt ticks: Double) { sweep = OutboxSweep(last: ticks) }

    /// The next sweep, while some channel waits out a backoff (`pending`).
    func nextDeadline(pending: Bool) -> Double { sweep.nextDeadline(pending: pending) }

    /// Whether the sweep is due at `now`; if so it counts as done.
    func sweepDue(at now: Double) -> Bool { sweep.due(at: now) }

    /// A refusal that room at the relay ends: the recipient's quota, or the relay's own.
    static func refusedForRoom(_ reason: RefusalReason) -> Bool {
        [.quotaExceeded, .byteQuotaExceeded, .relayFull].contains(reason)
    }

    /// Sends what the outbox holds for this channel's contact, as far as it can go now.
    /// A new session is a new attempt: `ignoringBackoff` sends what a refusal postponed.
    /// While the channel keeps the steady pace a file's chunks go one per slot: at a
    /// slot's end (`inSlot`) one chunk may go, else none (they wait for the next slot).
    /// Returns whether a chunk went.
    @discardableResult
    func flush(_ channel: PairwiseChannel, ignoringBackoff: Bool = false, inSlot: Bool = false,
               context: some OutboxContext) throws(EngineError) -> Bool {
        guard context.sendsMessages else { return false }
        let contact = channel.contact
        let t = context.now
        let items = try AccountService.wrap { try context.store.outbox(contact: contact.id) }
        guard !items.isEmpty else { return false }
        // Whatever this flush did: what each file being sent waits for now.
        defer { context.noteUploadWaits(channel, items.filter(\.content.isAttachment).map(\.message)) }
        // Who may be sent what (`SendPolicy`): nothing to a blocked or deleted contact or to
        // keys that were refused; to a device not pinned, what the user asked for below the
        // row that told them of it.
        let decisions = items.map { channel.may(.message($0.origin)) }
        if decisions.contains(.refuse) {
            try giveUp(items, contact: contact, at: t, context: context)
            return false
        }
        // An attachment stays due while chunks of it are still to go (`sendAttachment`).
        var due = zip(items, decisions).filter { item, decision in
            (!channel.traffic.sent.contains(item.message) || item.content.isAttachment) && (ignoringBackoff || item.nextAttemptAt <= t)
        }
        // What a refusal postponed and is not due yet: the once-a-second sweep comes back for it.
        channel.backoffPending = !ignoringBackoff && items.contains { $0.nextAttemptAt > t }
        let held = due.filter { $0.1 == .hold(.newDevice) }.count
        if held > 0 {
            context.log("\(held) message(s) to \(contact.name) wait until their new device is verified (their code entered again) or they are sent again by hand")
        }
        due.removeAll { $0.1 != .send }
        let dueItems = due.map(\.0)
        guard !dueItems.isEmpty else { return false }
        let deadline = context.ticks + context.acknowledgementSeconds
        if channel.hasSession, let client = context.connectedRelay(channel.relay) {
            let slotChunks: Int? = context.keepsPace(channel) ? (inSlot ? 1 : 0) : nil
            var chunks = slotChunks
            try sendInSession(dueItems, of: items, channel, client: client, deadline: deadline, chunks: &chunks, context: context)
            return slotChunks == 1 && chunks == 0
        }
        if channel.saved == nil, let token = contact.inviteToken.flatMap({ InviteToken(bytes: $0) }),
           let address = channel.contactRelay, let client = context.connectedRelay(address) {
            sendAsRequests(dueItems, channel, token: token, address: address, client: client, deadline: deadline, context: context)
        }
        return false
    }

    /// Nothing may go to this contact (blocked, deleted, keys refused): each item is Failed to
    /// send and leaves the outbox.
    private func giveUp(_ items: [OutboxItem], contact: Contact, at t: Int64, context: some OutboxContext) throws(EngineError) {
        var shown: [(ConversationID, MessageID, MessageStatus)] = []
        try AccountService.wrap {
            try context.store.transaction { tx in
                // Each delivery to them, in every conversation (a group's to the others goes on).
                let conversations = Dictionary(items.map { ($0.message, $0.conversation) }, uniquingKeysWith: { a, _ in a })
                for change in try tx.giveUp(items.map(\.delivery), at: t) where change.changed {
                    guard let conversation = conversations[change.message] else { continue }
                    let status = conversation == contact.id.conversation ? change.current
                        : try tx.deliverySummary(message: change.message).shown ?? change.current
                    shown.append((conversation, change.id, status))
                }
            }
        }
        for (conversation, id, status) in shown { context.emit(.statusChanged(conversation: conversation, id: id, status: status)) }
    }

    /// The session's way: each item sealed under the session's send keys in its own envelope,
    /// an attachment's chunks after its item, while the relay has room.
    private func sendInSession(_ dueItems: [OutboxItem], of items: [OutboxItem], _ channel: PairwiseChannel, client: any RelayLink,
                               deadline: Double, chunks: inout Int?, context: some OutboxContext) throws(EngineError) {
        guard var saved = channel.saved, saved.canSeal else { return }
        // The receiver takes at most so many files from one contact at once
        // (`IncomingFilePolicy`): a file starts once fewer are ahead of it, not yet taken whole.
        let startable = Set(items.filter(\.content.isAttachment).prefix(IncomingFilePolicy.maximumMovingPerContact).map(\.message))
        for item in dueItems {
            if item.content.isAttachment {
                guard startable.contains(item.message) else { continue }
                channel.roomRefused.remove(item.message)  // tried again now
                guard try context.sendAttachment(item, channel, &saved, client: client, deadline: deadline, chunks: &chunks)
                else { break }
                continue
            }
            // A relay slow to read (or not reading) has a backlog: the rest stays in the
            // outbox until it took it (`backlogDrained`).
            guard client.hasRoom(), let envelope = try context.sealItem(item, channel, &saved) else { break }
            do {
                _ = try context.sendOnLink(channel, .envelope(envelope), as: .message(channel.contact.id, item.message, isAttachment: false, conversation: item.conversation), flush: false)
            } catch {
                break
            }
            channel.traffic.sent.insert(item.message)
            channel.expectAcknowledgement(of: item.message, by: deadline)
        }
        channel.saved = saved
        try? client.flush()
    }

    /// Never had a session: a message request reaches the contact even while they are
    /// offline. A file waits for a session: a request carries a message item, never chunks.
    private func sendAsRequests(_ dueItems: [OutboxItem], _ channel: PairwiseChannel, token: InviteToken, address: RelayAddress,
                                client: any RelayLink, deadline: Double, context: some OutboxContext) {
        let code = context.ownContactCode
        // A group's message waits for a session: a member who is not a contact gets no request.
        for item in dueItems where !item.content.isAttachment && item.groupID == nil {
            guard client.hasRoom() else { break }
            let request = MessageRequest(senderCode: code, messageID: item.id, createdAt: item.createdAt, content: item.content)
            guard context.sendRequest(request, to: channel.contact, token: token, at: address, as: .message(channel.contact.id, item.message, isAttachment: false, conversation: item.conversation))
            else { break }
            channel.traffic.sent.insert(item.message)
            channel.expectAcknowledgement(of: item.message, by: deadline)
        }
        try? client.flush()
    }
}

extension OutboxItem {
    /// A message written with a disappearing timer travels as `timedMessage`, its timer first;
    /// a group's as `groupMessage`, its group, timer and this side's log heads first.
    var envelopeKind: EnvelopeKind { groupID != nil ? .groupMessage : expiresAfter == nil ? .message : .timedMessage }

    var envelopeBody: [UInt8] {
        if let groupID { return GroupWire.messageBody(group: groupID, timer: expiresAfter, heads: groupHeads, content: encodedContent) }
        guard let seconds = expiresAfter else { return encodedContent }
        var w = ByteWriter(capacity: 4 + encodedContent.count)
        w.u32(seconds)
        w.raw(encodedContent)
        return w.bytes
    }
}
