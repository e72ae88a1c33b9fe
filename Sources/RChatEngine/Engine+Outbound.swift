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
    func flushOutbox(_ conversation: LiveConversation, ignoringBackoff: Bool = false, inSlot: Bool = false) throws(EngineError) -> Bool {
        guard policy.sends else { return false }
        let contact = conversation.contact
        let t = now
        let items = try AccountService.wrap { try store.outbox(contact: contact.id) }
        guard !items.isEmpty else { return false }
        // Whatever this flush did: what each file being sent waits for now.
        defer { noteUploadWaits(conversation, items.filter(\.content.isAttachment).map(\.message)) }
        // Who may be sent what (`SendPolicy`): nothing to a blocked or deleted contact or to
        // keys that were refused; to a device not pinned, what the user asked for below the
        // row that told them of it.
        let decisions = items.map { conversation.may(.message($0.origin)) }
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
            (!conversation.sent.contains(item.message) || item.content.isAttachment) && (ignoringBackoff || item.nextAttemptAt <= t)
        }
        // What a refusal postponed and is not due yet: the once-a-second sweep comes back for it.
        conversation.backoffPending = !ignoringBackoff && items.contains { $0.nextAttemptAt > t }
        let held = due.filter { $0.1 == .hold(.newDevice) }.count
        if held > 0 {
            log("\(held) message(s) to \(contact.name) wait until their new device is verified (their code entered again) or they are sent again by hand")
        }
        due.removeAll { $0.1 != .send }
        let dueItems = due.map(\.0)
        guard !dueItems.isEmpty else { return false }
        let deadline = ticks + Double(settings.acknowledgementTimeoutSeconds)
        let slotChunks: Int? = keepsPace(conversation) ? (inSlot ? 1 : 0) : nil
        var chunks = slotChunks
        if conversation.hasSession, var saved = conversation.saved, let keys = saved.sendKeys,
                  let client = connections[conversation.relay]?.client {
            // The receiver takes at most so many files from one contact at once
            // (`IncomingFilePolicy`): a file starts once fewer are ahead of it, not yet taken whole.
            let startable = Set(items.filter(\.content.isAttachment).prefix(IncomingFilePolicy.maximumMovingPerContact).map(\.message))
            for item in dueItems {
                if item.content.isAttachment {
                    guard startable.contains(item.message) else { continue }
                    conversation.roomRefused.remove(item.message)  // tried again now
                    guard try sendAttachment(item, conversation, &saved, keys: keys, client: client, deadline: deadline, chunks: &chunks)
                    else { break }
                    continue
                }
                // A relay slow to read (or not reading) has a backlog: the rest stays in the
                // outbox until it took it (`backlogDrained`).
                guard client.hasRoom(), let sequence = saved.takeSendSequence() else { break }
                let envelope = Envelope.seal(kind: item.envelopeKind, messageID: item.id, sequence: sequence, body: item.envelopeBody,
                                             keys: keys, conversation: conversation.secret)
                do {
                    try sendOnLink(conversation, .envelope(envelope), as: .message(contact.id, item.message), flush: false)
                } catch {
                    break
                }
                conversation.sent.insert(item.message)
                conversation.acknowledgementDeadlines[item.message] = conversation.acknowledgementDeadlines[item.message] ?? deadline
            }
            conversation.saved = saved
            try? client.flush()
        } else if conversation.saved == nil, let token = contact.inviteToken.flatMap({ InviteToken(bytes: $0) }),
                  let address = conversation.contactRelay,
                  let connection = connections[address], let client = connection.client {
            // Never had a session: a message request reaches them even while they are offline.
            let code = identity.contactCode(device: account.device).text
            // A file waits for a session: a request carries a message item, never chunks.
            for item in dueItems where !item.content.isAttachment {
                guard client.hasRoom() else { break }
                let request = MessageRequest(senderCode: code, messageID: item.id, createdAt: item.createdAt, content: item.content)
                guard let payload = try? request.sealed(from: identity.accountKey, to: contact.accountKey),
                      let seq = try? client.sendRequest(to: token, payload, flush: false) else { break }
                connection.inFlight[seq] = .message(contact.id, item.message)
                conversation.sent.insert(item.message)
                conversation.acknowledgementDeadlines[item.message] = conversation.acknowledgementDeadlines[item.message] ?? deadline
            }
            try? client.flush()
        }
        return slotChunks == 1 && chunks == 0
    }

    /// The relay's answers to what we sent: `sent` is "Sent" (and the outbox row goes),
    /// `refused` keeps the message Sending and retries later.
    func handleAnswers(_ all: [(RelayConnection, RelayEvent)]) throws(EngineError) {
        thread.check()
        for (connection, _) in all { answersFlow(on: connection) }
        // Answers to dummies and cover record nothing: alone, they open no transaction.
        let answers = all.filter { connection, event in
            switch event {
            case .sent(let seq, _), .refused(let seq, _):
                guard case .dummy = connection.inFlight[seq] else { return true }
                connection.inFlight[seq] = nil
                return false
            default:
                return true
            }
        }
        guard !answers.isEmpty else { return }
        let t = now
        var events: [ChatEvent] = []
        var receiptsSettled = false
        var ready: [LiveConversation] = []
        var roomRefusedNow: Set<ContactID> = []
        // Conversations with a file now taken whole: one waiting behind the bound of files
        // at once (`IncomingFilePolicy`) may start.
        var filesTakenWhole: Set<ContactID> = []
        try AccountService.wrap {
            try store.transaction { tx in
                // Sent: the relay took these messages. Raised together after the loop.
                var taken: [MessageRowID] = []
                var takenFor: [MessageRowID: ContactID] = [:]
                // Attachments: their items and chunks the relay took, Sent once all are.
                var chunksTaken: [MessageRowID: [Int]] = [:]
                var attachmentItems: Set<MessageRowID> = []
                for (connection, event) in answers {
                    switch event {
                    case let .sent(seq, _):
                        guard let what = connection.inFlight.removeValue(forKey: seq) else { continue }
                        switch what {
                        case let .message(contactID, row):
                            conversations[contactID]?.acknowledgementDeadlines[row] = nil
                            // Off the outbox now: a later Resend in this session must go out.
                            conversations[contactID]?.sent.remove(row)
                            takenFor[row] = contactID
                            if try isAttachment(row, tx) { attachmentItems.insert(row) } else { taken.append(row) }
                        case let .chunk(contactID, row, index):
                            conversations[contactID]?.chunksInFlight[row]?.remove(index)
                            chunksTaken[row, default: []].append(index)
                            takenFor[row] = contactID
                        case let .fileReceipts(contactID, ids):
                            try tx.settleFileReceipts(contact: contactID, ids: ids)
                            conversations[contactID]?.fileReceiptsInFlight.subtract(ids)
                        case let .deliveredReceipts(contactID, _):
                            if let mark = conversations[contactID]?.deliveredInFlight.taken(seq: seq) {
                                try tx.settleDeliveredReceipts(contact: contactID, through: mark)
                            }
                            receiptsSettled = true
                        case let .readReceipts(contactID, ids):
                            try tx.settleReadReceipts(contact: contactID, ids: ids)
                            conversations[contactID]?.readReceiptsInFlight.subtract(ids)
                            receiptsSettled = true
                        case let .notice(contactID, ids):
                            try noticeSent(contactID, ids, tx, &events)
                        case let .control(contactID, frame):
                            // Our handshake reply is at the relay, ahead of anything else.
                            if case .handshakeReply = frame, let c = conversations[contactID],
                               case .success = c.apply(.replyAccepted, at: t) {
                                ready.append(c)
                            }
                        case .dummy:
                            break  // answered above
                        }
                    case let .refused(seq, reason):
                        guard let what = connection.inFlight.removeValue(forKey: seq) else { continue }
                        switch what {
                        case let .message(contactID, row):
                            // Stays Sending; tried again after a backoff. Unless it already left
                            // the outbox: another copy (a request, an earlier session's) was
                            // acknowledged, or a receipt came — then there is nothing to retry.
                            guard let queued = try tx.outboxItem(message: row) else { continue }
                            let wait = Int64(min(300, 1 << min(queued.attempts + 1, 8)))
                            try tx.recordSendAttempt(message: row, session: nil, nextAttemptAt: t + wait)
                            conversations[contactID]?.sent.remove(row)
                            conversations[contactID]?.acknowledgementDeadlines[row] = nil
                            conversations[contactID]?.backoffPending = true
                            if Self.refusedForRoom(reason), try isAttachment(row, tx) {
                                conversations[contactID]?.roomRefused.insert(row)
                                roomRefusedNow.insert(contactID)
                            }
                            log("the relay refused a message: \(reason); trying again in \(wait) s")
                        case let .chunk(contactID, row, index):
                            // Sent again after a backoff, as a refused message is, or as soon
                            // as the receiver reports it took what was held (room freed).
                            conversations[contactID]?.chunksInFlight[row]?.remove(index)
                            if Self.refusedForRoom(reason) {
                                conversations[contactID]?.roomRefused.insert(row)
                                roomRefusedNow.insert(contactID)
                            }
                            if let queued = try tx.outboxItem(message: row), queued.nextAttemptAt <= t {
                                let wait = Int64(min(300, 1 << min(queued.attempts + 1, 8)))
                                try tx.recordSendAttempt(message: row, session: nil, nextAttemptAt: t + wait)
                                log("the relay refused part of a file: \(reason); trying again in \(wait) s")
                            }
                            conversations[contactID]?.backoffPending = true
                        case let .fileReceipts(contactID, ids):
                            conversations[contactID]?.fileReceiptsInFlight.subtract(ids)
                            retryReceiptsSoon()
                        case let .deliveredReceipts(contactID, _):
                            // Still owed in the store: tried again in a moment.
                            conversations[contactID]?.deliveredInFlight.forgetAll()
                            retryReceiptsSoon()
                        case let .readReceipts(contactID, ids):
                            conversations[contactID]?.readReceiptsInFlight.subtract(ids)
                            retryReceiptsSoon()
                        case let .notice(contactID, ids):
                            conversations[contactID]?.noticeInFlight.subtract(ids)
                            conversations[contactID]?.startedOverNoticeInFlight = false
                        case let .control(contactID, frame):
                            // A refused handshake would leave both sides on a link with no
                            // session: the same frame goes again on the same link.
                            if let c = conversations[contactID], let link = c.linkState.link {
                                c.controlRetries.append((frame, link.id, link.generation, ticks + 1))
                                log("the relay refused a frame to \(c.contact.name): \(reason); trying again in 1 s")
                            }
                        case .dummy:
                            break  // a dummy is never sent again
                        }
                    default:
                        break
                    }
                }
                if !chunksTaken.isEmpty || !attachmentItems.isEmpty {
                    let whole = try attachmentsTaken(chunks: chunksTaken, items: attachmentItems, tx, &events)
                    taken += whole
                    filesTakenWhole.formUnion(whole.compactMap { takenFor[$0] })
                }
                // A disappearing message's clock starts when it is sent: when the relay took it.
                try tx.startExpiry(messages: taken, at: t)
                for change in try tx.raiseStatuses(messages: taken, event: .relayAcknowledged, at: t) where change.changed {
                    if let contactID = takenFor[change.message], conversations[contactID] != nil {
                        events.append(.statusChanged(conversation: contactID.conversation, id: change.id, status: change.current))
                    }
                }
            }
        }
        for event in events { emit(event) }
        for contactID in roomRefusedNow {
            if let c = conversations[contactID] { noteUploadWaits(c, Array(c.roomRefused)) }
        }
        for conversation in ready { try sessionReady(conversation) }
        for contactID in filesTakenWhole {
            if let c = conversations[contactID] { try flushOutbox(c) }
        }
        // More may be owed than one flush takes (a long backlog): go on at once.
        if receiptsSettled { scheduleReceipts(urgent: true) }
    }

    /// A refusal that room at the relay ends: the recipient's quota, or the relay's own.
    static func refusedForRoom(_ reason: RefusalReason) -> Bool {
        [.quotaExceeded, .byteQuotaExceeded, .relayFull].contains(reason)
    }

    /// The initiator's first frame in a new session, with nothing to show: it tells the
    /// responder the handshake completed here, so the responder moves its sending to the
    /// new session (`SavedSessionState.confirm`).
    func sendConfirmation(_ conversation: LiveConversation) {
        sendEmptyCover(conversation, as: .confirmation)
    }

    // MARK: receipts

    /// A refused receipt frame: what it carried is still owed; go again in a second.
    func retryReceiptsSoon() {
        let retry = ticks + 1
        receiptsDue = min(receiptsDue ?? retry, retry)
    }

    /// Receipts go in small batches: after the window, or at once when many are owed.
    func scheduleReceipts(urgent: Bool) {
        let when = ticks + (urgent ? 0 : Double(settings.receiptWindowMilliseconds) / 1000)
        receiptsDue = min(receiptsDue ?? when, when)
    }

    /// Sends the receipts owed, up to `receiptsPerFlush` of each kind per conversation; when
    /// more are owed it comes back at once (a long backlog goes out frame after frame). A
    /// conversation that keeps the steady pace sends its receipts at its slots' ends instead
    /// (`SteadyPace.slotFrames`), one frame per slot.
    func flushReceipts() throws(EngineError) {
        receiptsDue = nil
        guard policy.sendsReceipts else { return }
        try flushFileReceipts()
        let owed = try AccountService.wrap { try store.contactsOwedReceipts() }
        var more = false
        for contactID in owed {
            guard let conversation = conversations[contactID] else { continue }
            if keepsPace(conversation) {
                conversation.slotWaiting.receipts = true
                continue
            }
            if try sendReceipts(conversation, frames: nil).more { more = true }
        }
        if more { scheduleReceipts(urgent: true) }
    }

    /// Sends the Delivered and Read receipts owed to one conversation, up to `frames` frames
    /// (nil: up to `receiptsPerFlush` of each kind). Returns whether more may be owed than
    /// this took (a long backlog), and how many frames went.
    func sendReceipts(_ conversation: LiveConversation, frames: Int?) throws(EngineError) -> (more: Bool, sent: Int) {
        let contactID = conversation.contact.id
        // Only in a session the contact holds: a receipt it cannot read is lost for good.
        guard conversation.canSend, var saved = conversation.saved, saved.peerHoldsSendingSession, let keys = saved.sendKeys
        else { return (false, 0) }
        let limit = frames ?? Int.max
        var budget = limit
        var more = false
        // Owed: what this run stored, from memory; else from the store — but not while a
        // batch of this conversation waits for the disk (its messages are in the store,
        // not yet durable; their receipts go once they are).
        let sentThrough = conversation.deliveredInFlight.sentThrough
        let after: Int64
        if let sentThrough { after = sentThrough } else {
            after = try AccountService.wrap { try store.deliveredReceiptedThrough(contact: contactID) }
        }
        var delivered = conversation.storedThisRun.owed(after: after, limit: Self.receiptsPerFlush) ?? []
        if delivered.isEmpty && durableThrough >= startupSync
            && !awaitingDisk.contains(where: { $0.after.stored.contains { $0.0 === conversation } }) {
            delivered = try AccountService.wrap {
                try store.deliveredReceiptsOwed(contact: contactID, after: sentThrough, limit: Self.receiptsPerFlush)
            }
        }
        let client = connections[conversation.relay]?.client
        var rest = delivered[...]
        while !rest.isEmpty, budget > 0, let client, client.hasRoom() {
            let chunk = rest.prefix(Self.receiptsPerFrame)
            rest = rest.dropFirst(chunk.count)
            guard let sequence = saved.takeSendSequence() else { break }
            let envelope = receiptEnvelope(.receiptDelivered, chunk.map(\.id), sequence: sequence, keys: keys, conversation: conversation)
            let through = chunk.last!.position
            guard let seq = try? sendOnLink(conversation, .envelope(envelope), as: .deliveredReceipts(contactID, through: through),
                                            flush: false) else { break }
            conversation.deliveredInFlight.sent(seq: seq, through: through)
            budget -= 1
        }
        // All of this flush went, and more may be owed: come back at once. (A frame that
        // could not go leaves the rest for the session's next start or settle.)
        if rest.isEmpty && delivered.count == Self.receiptsPerFlush { more = true }
        if !rest.isEmpty && budget == 0 { more = true }
        if budget > 0 {
            let read = try AccountService.wrap { try store.readReceiptsOwed(contact: contactID, limit: Self.receiptsPerFlush) }
                .filter { !conversation.readReceiptsInFlight.contains($0) }
            var readRest = read[...]
            while !readRest.isEmpty, budget > 0, let client, client.hasRoom() {
                let chunk = Array(readRest.prefix(Self.receiptsPerFrame))
                readRest = readRest.dropFirst(chunk.count)
                guard let sequence = saved.takeSendSequence() else { break }
                let envelope = receiptEnvelope(.receiptRead, chunk, sequence: sequence, keys: keys, conversation: conversation)
                guard (try? sendOnLink(conversation, .envelope(envelope), as: .readReceipts(contactID, chunk), flush: false)) != nil
                else { break }
                conversation.readReceiptsInFlight.formUnion(chunk)
                budget -= 1
            }
            if !readRest.isEmpty && budget == 0 { more = true }
        }
        conversation.saved = saved
        try? client?.flush()
        return (more, limit - budget)
    }

    /// Receipts taken from the store per conversation and kind in one flush, and ids per frame.
    static let receiptsPerFlush = 4096
    /// Seconds between presentations of the codes of conversations without a link, under
    /// the relay's pairing timeout (300 s by default).
    static let presentAgainSeconds: Double = 240
    /// Seconds an established side presents its counter codes alone before it adds today's
    /// recovery code: long enough for a contact online at the same moment to meet it on the
    /// counter code (after a relay restart both sides reconnect on the same backoff steps,
    /// 1, 2, 4… s), short enough that a contact who started over is found soon.
    static let recoveryCodeAfterSeconds: Double = 5
    static let receiptsPerFrame = 1024

    func receiptEnvelope(_ kind: EnvelopeKind, _ ids: [MessageID], sequence: UInt64, keys: SessionKeys,
                                conversation: LiveConversation) -> [UInt8] {
        var body = ByteWriter(capacity: 2 + ids.count * MessageID.byteCount)
        body.u16(UInt16(ids.count))
        for id in ids { body.raw(id) }
        return Envelope.seal(kind: kind, messageID: .fresh(clock), sequence: sequence, body: body.bytes, keys: keys,
                             conversation: conversation.secret)
    }

    // MARK: timers

    /// When the next timer is due (at most a second away: the sweeps), on the monotonic clock.
    func nextTimer() -> Double {
        var next = ticks + 1
        if let due = receiptsDue { next = min(next, due) }
        for conversation in conversations.values {
            for retry in conversation.controlRetries { next = min(next, retry.at) }
            if case .due(let at) = conversation.recoveryCode { next = min(next, at) }
            if let at = conversation.windowReopensAt { next = min(next, at) }
        }
        for connection in connections.values {
            if connection.client == nil {
                if !connection.connecting { next = min(next, connection.retryAt) }
            } else {
                next = min(next, connection.keepaliveAt, connection.presentAgainAt)
            }
        }
        return min(next, nextSteadyTraffic)
    }

    func runTimers() throws(EngineError) {
        thread.check()
        if let due = receiptsDue, due <= ticks { try flushReceipts() }
        try keepSteadyTraffic()
        try deleteExpiredMessages()
        let retryTime = ticks
        for conversation in conversations.values where conversation.controlRetries.contains(where: { $0.at <= retryTime }) {
            let due = conversation.controlRetries.filter { $0.at <= retryTime }
            conversation.controlRetries.removeAll { $0.at <= retryTime }
            // Only on the link it was meant for: a new link starts its own handshake.
            let link = conversation.linkState.link
            for retry in due where retry.link == link?.id && retry.generation == link?.generation {
                do {
                    try sendOnLink(conversation, retry.frame, as: .control(conversation.contact.id, retry.frame))
                } catch {
                    log("cannot send to \(conversation.contact.name) again: \(error)")
                }
            }
        }
        // Overdue relay acknowledgements: Not confirmed (a later ack still makes it Sent).
        let nowTicks = ticks
        var events: [ChatEvent] = []
        for conversation in conversations.values {
            let overdue = conversation.acknowledgementDeadlines.filter { $0.value <= nowTicks }.map(\.key)
            guard !overdue.isEmpty else { continue }
            acknowledgementOverdue(on: conversation.relay)
            try AccountService.wrap {
                try store.transaction { tx in
                    for row in overdue {
                        conversation.acknowledgementDeadlines[row] = nil
                        if let change = try tx.raiseStatus(message: row, event: .acknowledgementTimedOut, at: now), change.changed {
                            events.append(.statusChanged(conversation: conversation.contact.id.conversation, id: change.id, status: change.current))
                        }
                    }
                }
            }
        }
        for event in events { emit(event) }
        for connection in connections.values where connection.client != nil && connection.presentAgainAt <= nowTicks {
            connection.presentAgainAt = nowTicks + Self.presentAgainSeconds
            for conversation in conversations.values
            where conversation.relay == connection.address && (conversation.linkState.link?.peerGone ?? true) {
                present(conversation)
            }
        }
        for conversation in conversations.values {
            guard case .due(let at) = conversation.recoveryCode, at <= nowTicks else { continue }
            if conversation.linkState.link?.peerGone ?? true {
                conversation.recoveryCode = .listening
                present(conversation)
            } else {
                conversation.recoveryCode = .notYet
            }
        }
        for connection in connections.values where connection.keepaliveAt <= nowTicks {
            connection.keepaliveAt = nowTicks + keepaliveSeconds
            do { try connection.client?.ping() } catch { log("cannot ping the relay: \(error)") }
        }
        // Files held a window ahead of a receiver that stopped reporting: the rest goes now.
        for conversation in conversations.values {
            guard let at = conversation.windowReopensAt, at <= nowTicks else { continue }
            conversation.windowReopensAt = nil
            try flushOutbox(conversation)
        }
        // Retries whose backoff has passed (only where a refusal postponed something: reading
        // a long outbox every second cost the sender a quarter of its time).
        if nowTicks - lastOutboxSweep > 1 {
            lastOutboxSweep = nowTicks
            for conversation in conversations.values where conversation.backoffPending { try flushOutbox(conversation) }
        }
    }
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
