import Foundation
import RChatCore
import RChatRelayClient
import RChatWire
import RChatStore

/// What the relay's answer to one frame does: made when the frame is sent and registered
/// under its sequence number (`RelayConnection.requests`), run by the answer that completes
/// it — `taken` for `sent` (the relay took it: Sent, a receipt settled), `refused` for
/// `refused` (kept to go again). The answers of one turn run in one transaction, each adding
/// to the batch what is settled together after it (`AnswerBatch`).
struct RelayCompletion {
    /// A dummy in a session, or cover to the own mailbox: its answer records nothing, and
    /// answers of nothing else open no transaction.
    let recordsNothing: Bool
    let taken: (Engine, UInt64, inout AnswerBatch, StoreTransaction) throws -> Void
    let refused: (Engine, RefusalReason, inout AnswerBatch, StoreTransaction) throws -> Void
}

/// What the answers of one turn settle together once each ran.
struct AnswerBatch {
    let t: Int64
    /// Sent: the relay took these messages. Raised together at the end.
    var taken: [MessageRowID] = []
    var takenFor: [MessageRowID: ContactID] = [:]
    /// A group's messages the relay took for one member each, and their conversation.
    var groupTaken: [(delivery: DeliveryKey, conversation: ConversationID)] = []
    /// Attachments: their items and chunks the relay took, per delivery (a group's file goes
    /// to each member on its own), Sent once all are; and each delivery's conversation.
    var chunksTaken: [DeliveryKey: [Int]] = [:]
    var attachmentItems: Set<DeliveryKey> = []
    var fileConversations: [DeliveryKey: ConversationID] = [:]
    var events: [ChatEvent] = []
    var receiptsSettled = false
    var ready: [PairwiseChannel] = []
    var roomRefusedNow: Set<ContactID> = []
    /// Conversations with a file now taken whole: one waiting behind the bound of files at
    /// once (`IncomingFilePolicy`) may start, through the channels of their members.
    var filesTakenWhole: Set<ConversationID> = []
}

extension RelayCompletion {
    /// A dummy is never sent again.
    static var dummy: RelayCompletion { RelayCompletion(recordsNothing: true, taken: { _, _, _, _ in }, refused: { _, _, _, _ in }) }

    /// A message's item (a text, a file's first frame: `isAttachment`, as the outbox knew it)
    /// in a session or as a request.
    static func message(_ contactID: ContactID, _ row: MessageRowID, isAttachment: Bool, conversation: ConversationID) -> RelayCompletion {
        RelayCompletion(recordsNothing: false, taken: { engine, _, batch, tx in
            let channel = engine.channels[contactID]
            channel?.acknowledged(row)
            // Off the outbox now: a later Resend in this session must go out.
            channel?.traffic.sent.remove(row)
            let delivery = DeliveryKey(message: row, member: contactID)
            if isAttachment {
                batch.attachmentItems.insert(delivery)
                batch.fileConversations[delivery] = conversation
            } else if conversation != contactID.conversation {
                // A group's: that member's delivery only.
                batch.groupTaken.append((delivery, conversation))
            } else {
                batch.taken.append(row)
            }
            if conversation == contactID.conversation { batch.takenFor[row] = contactID }
        }, refused: { engine, reason, batch, tx in
            // Stays Sending; tried again after a backoff. Unless it already left the outbox:
            // another copy (a request, an earlier session's) was acknowledged, or a receipt
            // came — then there is nothing to retry.
            let delivery = DeliveryKey(message: row, member: contactID)
            guard let queued = try tx.outboxItem(delivery) else { return }
            let wait = Int64(min(300, 1 << min(queued.attempts + 1, 8)))
            try tx.recordSendAttempt(delivery, session: nil, nextAttemptAt: batch.t + wait)
            let channel = engine.channels[contactID]
            channel?.traffic.sent.remove(row)
            channel?.acknowledged(row)
            channel?.backoffPending = true
            if Outbox.refusedForRoom(reason), isAttachment {
                channel?.roomRefused.insert(row)
                batch.roomRefusedNow.insert(contactID)
            }
            engine.log("the relay refused a message: \(reason); trying again in \(wait) s")
        })
    }

    /// Chunk `index` of the attachment message `row`, to the member `contactID`.
    static func chunk(_ contactID: ContactID, _ row: MessageRowID, index: Int, conversation: ConversationID) -> RelayCompletion {
        let delivery = DeliveryKey(message: row, member: contactID)
        return RelayCompletion(recordsNothing: false, taken: { engine, _, batch, _ in
            engine.channels[contactID]?.traffic.chunksInFlight[row]?.remove(index)
            batch.chunksTaken[delivery, default: []].append(index)
            batch.fileConversations[delivery] = conversation
            if conversation == contactID.conversation { batch.takenFor[row] = contactID }
        }, refused: { engine, reason, batch, tx in
            // Sent again after a backoff, as a refused message is, or as soon as the receiver
            // reports it took what was held (room freed).
            let channel = engine.channels[contactID]
            channel?.traffic.chunksInFlight[row]?.remove(index)
            if Outbox.refusedForRoom(reason) {
                channel?.roomRefused.insert(row)
                batch.roomRefusedNow.insert(contactID)
            }
            if let queued = try tx.outboxItem(delivery), queued.nextAttemptAt <= batch.t {
                let wait = Int64(min(300, 1 << min(queued.attempts + 1, 8)))
                try tx.recordSendAttempt(delivery, session: nil, nextAttemptAt: batch.t + wait)
                engine.log("the relay refused part of a file: \(reason); trying again in \(wait) s")
            }
            channel?.backoffPending = true
        })
    }

    /// This side's could-not-read notice (and with it the started-over notice, if it went).
    static func notice(_ contactID: ContactID, _ ids: [MessageID]) -> RelayCompletion {
        RelayCompletion(recordsNothing: false, taken: { engine, _, batch, tx in
            guard let channel = engine.channels[contactID] else { return }
            try Recovery.noticeTaken(ids, on: channel, tx, &batch.events, context: engine)
        }, refused: { engine, _, _, _ in
            if let channel = engine.channels[contactID] { Recovery.noticeRefused(ids, on: channel) }
        })
    }

    /// A frame on a conversation's link (handshake, key announcement): sent again on the
    /// same link if the relay refuses it (its quota for the peer's mailbox).
    static func control(_ contactID: ContactID, _ frame: LinkFrame) -> RelayCompletion {
        RelayCompletion(recordsNothing: false, taken: { engine, _, batch, _ in
            // Our handshake reply is at the relay, ahead of anything else.
            if case .handshakeReply = frame, let c = engine.channels[contactID],
               case .success = c.apply(.replyAccepted, at: batch.t) {
                batch.ready.append(c)
            }
        }, refused: { engine, reason, _, _ in
            // A refused handshake would leave both sides on a link with no session: the same
            // frame goes again on the same link.
            if let c = engine.channels[contactID], let link = c.linkState.link {
                c.controlRetries.append((frame, link.id, link.generation, engine.ticks + 1))
                engine.log("the relay refused a frame to \(c.contact.name): \(reason); trying again in 1 s")
            }
        })
    }
}

extension Engine {
    /// The relay's answers to what we sent, each completing the request it answers: `sent`
    /// is "Sent" (and the outbox row goes), `refused` keeps the message Sending and retries
    /// later. An answer that completes nothing (no request under its number, or answered
    /// already) is one log line and changes nothing.
    func handleAnswers(_ all: [(RelayConnection, RelayEvent)]) throws(EngineError) {
        thread.check()
        var answered: [(RelayCompletion, UInt64, RefusalReason?)] = []
        for (connection, event) in all {
            answersFlow(on: connection)
            let seq: UInt64, refusal: RefusalReason?
            switch event {
            case .sent(let s, _): (seq, refusal) = (s, nil)
            case .refused(let s, let reason): (seq, refusal) = (s, reason)
            default: continue
            }
            guard let completion = connection.requests.complete(seq) else {
                log("relay \(connection.address.host):\(connection.address.port) answered request \(seq), which waits for no answer")
                continue
            }
            // Answers to dummies and cover record nothing: alone, they open no transaction.
            if !completion.recordsNothing { answered.append((completion, seq, refusal)) }
        }
        guard !answered.isEmpty else { return }
        var batch = AnswerBatch(t: now)
        try AccountService.wrap {
            try store.transaction { tx in
                for (completion, seq, refusal) in answered {
                    if let refusal { try completion.refused(self, refusal, &batch, tx) } else { try completion.taken(self, seq, &batch, tx) }
                }
                try settle(&batch, tx)
                // The sending ratchets that sealed what the relay took: stored with it, so a
                // message's key is gone from the store once it is Sent.
                for channel in channels.values where channel.saved?.unsaved == true { try persist(channel, tx) }
            }
        }
        for event in batch.events { emit(event) }
        for contactID in batch.roomRefusedNow {
            if let c = channels[contactID] { noteUploadWaits(c, Array(c.roomRefused)) }
        }
        for channel in batch.ready { try sessionReady(channel) }
        for conversation in batch.filesTakenWhole {
            for channel in channels(of: conversation) { try flushOutbox(channel) }
        }
        // More may be owed than one flush takes (a long backlog): go on at once.
        if batch.receiptsSettled { receipts.schedule(urgent: true, context: self) }
    }

    /// What the batch's answers took, settled together: files taken whole, and Sent.
    private func settle(_ batch: inout AnswerBatch, _ tx: StoreTransaction) throws {
        if !batch.chunksTaken.isEmpty || !batch.attachmentItems.isEmpty {
            for delivery in try transfers.attachmentsTaken(chunks: batch.chunksTaken, items: batch.attachmentItems, tx, &batch.events, context: self) {
                guard let conversation = batch.fileConversations[delivery] else { continue }
                if conversation == delivery.member.conversation { batch.taken.append(delivery.message) }
                else { batch.groupTaken.append((delivery, conversation)) }
                batch.filesTakenWhole.insert(conversation)
            }
        }
        // A disappearing message's clock starts when it is sent: when the relay took it.
        try tx.startExpiry(messages: batch.taken, at: batch.t)
        for change in try tx.raiseStatuses(messages: batch.taken, event: .relayAcknowledged, at: batch.t) where change.changed {
            if let contactID = batch.takenFor[change.message], channels[contactID] != nil {
                batch.events.append(.statusChanged(conversation: contactID.conversation, id: change.id, status: change.current))
            }
        }
        guard !batch.groupTaken.isEmpty else { return }
        try tx.startExpiry(messages: batch.groupTaken.map(\.delivery.message), at: batch.t)
        let conversations = Dictionary(batch.groupTaken.map { ($0.delivery.message, $0.conversation) }, uniquingKeysWith: { a, _ in a })
        // What each message shows now, once per message however many members the relay took it for.
        var shown: [MessageRowID: (id: MessageID, status: MessageStatus)] = [:]
        for change in try tx.raiseDeliveries(batch.groupTaken.map(\.delivery), event: .relayAcknowledged, at: batch.t)
        where change.changed && shown[change.message] == nil {
            shown[change.message] = (change.id, try tx.deliverySummary(message: change.message).shown ?? change.current)
        }
        for (row, message) in shown.sorted(by: { $0.key < $1.key }) {
            guard let conversation = conversations[row] else { continue }
            batch.events.append(.statusChanged(conversation: conversation, id: message.id, status: message.status))
        }
    }
}
