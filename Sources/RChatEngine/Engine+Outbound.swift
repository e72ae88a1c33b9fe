import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import RChatStore

extension Engine {
    /// Sends what the outbox holds for this conversation, as far as it can go now: on the
    /// session if there is one; as message requests if the conversation never had one;
    /// otherwise it waits, Sending, until both sides are online.
    /// A new session is a new attempt: `ignoringBackoff` sends what a refusal postponed.
    /// While the conversation keeps the steady pace a file's chunks go one per slot: at a
    /// slot's end (`inSlot`) one chunk may go, else none (they wait for the next slot).
    /// Returns whether a chunk went.
    @discardableResult
    func flushOutbox(_ channel: PairwiseChannel, ignoringBackoff: Bool = false, inSlot: Bool = false) throws(EngineError) -> Bool {
        guard policy.sends else { return false }
        let contact = channel.contact
        let t = now
        let items = try AccountService.wrap { try store.outbox(contact: contact.id) }
        guard !items.isEmpty else { return false }
        // Whatever this flush did: what each file being sent waits for now.
        defer { noteUploadWaits(channel, items.filter(\.content.isAttachment).map(\.message)) }
        // Who may be sent what (`SendPolicy`): nothing to a blocked or deleted contact or to
        // keys that were refused; to a device not pinned, what the user asked for below the
        // row that told them of it.
        let decisions = items.map { channel.may(.message($0.origin)) }
        if decisions.contains(.refuse) {
            var changes: [StatusChange] = []
            try AccountService.wrap {
                try store.transaction { tx in
                    for item in items {
                        if let change = try tx.raiseStatus(message: item.message, event: .gaveUp, at: t) { changes.append(change) }
                        _ = try tx.removeFromOutbox(message: item.message)
                    }
                }
            }
            for c in changes where c.changed { emit(.statusChanged(conversation: contact.id.conversation, id: c.id, status: c.current)) }
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
            log("\(held) message(s) to \(contact.name) wait until their new device is verified (their code entered again) or they are sent again by hand")
        }
        due.removeAll { $0.1 != .send }
        let dueItems = due.map(\.0)
        guard !dueItems.isEmpty else { return false }
        let deadline = ticks + Double(settings.acknowledgementTimeoutSeconds)
        let slotChunks: Int? = keepsPace(channel) ? (inSlot ? 1 : 0) : nil
        var chunks = slotChunks
        if channel.hasSession, var saved = channel.saved, let keys = saved.sendKeys,
                  let client = connections[channel.relay]?.client {
            // The receiver takes at most so many files from one contact at once
            // (`IncomingFilePolicy`): a file starts once fewer are ahead of it, not yet taken whole.
            let startable = Set(items.filter(\.content.isAttachment).prefix(IncomingFilePolicy.maximumMovingPerContact).map(\.message))
            for item in dueItems {
                if item.content.isAttachment {
                    guard startable.contains(item.message) else { continue }
                    channel.roomRefused.remove(item.message)  // tried again now
                    guard try sendAttachment(item, channel, &saved, keys: keys, client: client, deadline: deadline, chunks: &chunks)
                    else { break }
                    continue
                }
                // A relay slow to read (or not reading) has a backlog: the rest stays in the
                // outbox until it took it (`backlogDrained`).
                guard client.hasRoom(), let sequence = saved.takeSendSequence() else { break }
                let envelope = Envelope.seal(kind: item.envelopeKind, messageID: item.id, sequence: sequence, body: item.envelopeBody,
                                             keys: keys, conversation: channel.secret)
                do {
                    try sendOnLink(channel, .envelope(envelope), as: .message(contact.id, item.message), flush: false)
                } catch {
                    break
                }
                channel.traffic.sent.insert(item.message)
                channel.expectAcknowledgement(of: item.message, by: deadline)
            }
            channel.saved = saved
            try? client.flush()
        } else if channel.saved == nil, let token = contact.inviteToken.flatMap({ InviteToken(bytes: $0) }),
                  let address = channel.contactRelay,
                  let connection = connections[address], let client = connection.client {
            // Never had a session: a message request reaches them even while they are offline.
            let code = identity.contactCode(device: account.device).text
            // A file waits for a session: a request carries a message item, never chunks.
            for item in dueItems where !item.content.isAttachment {
                guard client.hasRoom() else { break }
                let request = MessageRequest(senderCode: code, messageID: item.id, createdAt: item.createdAt, content: item.content)
                guard let payload = try? request.sealed(from: identity.accountKey, to: contact.accountKey),
                      let seq = try? client.sendRequest(to: token, payload, flush: false) else { break }
                connection.requests.register(seq, .message(contact.id, item.message))
                channel.traffic.sent.insert(item.message)
                channel.expectAcknowledgement(of: item.message, by: deadline)
            }
            try? client.flush()
        }
        return slotChunks == 1 && chunks == 0
    }

    /// A refusal that room at the relay ends: the recipient's quota, or the relay's own.
    static func refusedForRoom(_ reason: RefusalReason) -> Bool {
        [.quotaExceeded, .byteQuotaExceeded, .relayFull].contains(reason)
    }

    /// The initiator's first frame in a new session, with nothing to show: it tells the
    /// responder the handshake completed here, so the responder moves its sending to the
    /// new session (`SavedSessionState.confirm`).
    func sendConfirmation(_ channel: PairwiseChannel) {
        sendEmptyCover(channel, as: .confirmation)
    }

    /// Seconds between presentations of the codes of conversations without a link, under
    /// the relay's pairing timeout (300 s by default).
    static let presentAgainSeconds: Double = 240
    /// Seconds an established side presents its counter codes alone before it adds today's
    /// recovery code: long enough for a contact online at the same moment to meet it on the
    /// counter code (after a relay restart both sides reconnect on the same backoff steps,
    /// 1, 2, 4… s), short enough that a contact who started over is found soon.
    static let recoveryCodeAfterSeconds: Double = 5
}

extension OutboxItem {
    /// A message written with a disappearing timer travels as `timedMessage`, its timer first.
    var envelopeKind: EnvelopeKind { expiresAfter == nil ? .message : .timedMessage }

    var envelopeBody: [UInt8] {
        guard let seconds = expiresAfter else { return encodedContent }
        var w = ByteWriter(capacity: 4 + encodedContent.count)
        w.u32(seconds)
        w.raw(encodedContent)
        return w.bytes
    }
}

extension Engine {
    /// Disappearing messages whose time ran out go, with their files and alerts; a running
    /// view hears which (`itemsRemoved`).
    func deleteExpiredMessages() throws(EngineError) {
        let expired = try account.deleteExpired()
        guard !expired.isEmpty else { return }
        log("\(expired.count) disappearing message(s) deleted")
        var byConversation: [ContactID: [MessageID]] = [:]
        for message in expired { byConversation[message.contact, default: []].append(message.id) }
        for (contact, ids) in byConversation.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            emit(.itemsRemoved(conversation: contact.conversation, ids: ids))
        }
    }
}
