import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import RChatStore

/// A delivery as the engine thread takes it, with the connection it came on.
typealias Arrival = (connection: RelayConnection, inbound: Inbound)

extension Engine {
    /// What to do once the transaction that stored a batch has committed.
    struct AfterCommit {
        /// Per connection (by identity: hashing its address for every delivery showed up in
        /// profiles), the deliveries to acknowledge.
        var acknowledgements: [ObjectIdentifier: (RelayConnection, [HeldItemID])] = [:]
        var replies: [(PairwiseChannel, LinkFrame)] = []
        var sessionsStarted: [PairwiseChannel] = []
        /// Channels whose outbox got something to send again (each once: `resend(on:)`).
        private(set) var resendQueued: [PairwiseChannel] = []

        /// The channel's outbox is flushed after the commit (once, however many queued on it).
        mutating func resend(on channel: PairwiseChannel) {
            if !resendQueued.contains(where: { $0 === channel }) { resendQueued.append(channel) }
        }
        /// Messages decrypted in this batch, stored together before the commit.
        var incoming: [(PairwiseChannel, IncomingMessage)] = []
        /// A group's messages to store, each in its group's conversation, from the channel's contact.
        var groupIncoming: [(PairwiseChannel, ConversationID, IncomingMessage)] = []
        /// A group's changes made member rows: the engine sets up their channels.
        var contactsAdded = false
        /// What the batch stored, per conversation, once it commits.
        var stored: [(PairwiseChannel, [OwedDelivered])] = []
        /// Conversations whose keys changed: set up again after the commit.
        var rebuild: [ContactID] = []
        /// Conversations now in Keys don't match: their links are left after the commit.
        var keysDontMatch: [PairwiseChannel] = []
        /// Partial files written in this batch: fsynced before it commits.
        var partialFiles: [String: OpenFile] = [:]
        /// Whose file each of them is: a sync that fails discards that file alone.
        var partialOwners: [String: (PairwiseChannel, MessageRowID, session: [UInt8])] = [:]
        /// Files no longer needed once the batch committed (a partial file made whole).
        var filesToRemove: [String] = []
        /// Messages deleted for everyone in this batch (and actions retired): their files and
        /// alerts go once it is durable, then the index is merged and the log truncated.
        var unsent: [UnsentMessage] = []
        /// Messages of this batch that came with a disappearing timer.
        var timers: [(PairwiseChannel, MessageID, DisappearingTimer)] = []
        /// Files being received that moved in this batch: their progress goes to the sender
        /// once the batch is durable.
        var fileProgress: [MessageRowID: (PairwiseChannel, MessageID, Int, complete: Bool)] = [:]
        /// Files refused as they were offered: the sender is told once the batch is durable.
        var refusals: [(PairwiseChannel, MessageID, IncomingFilePolicy.Decision)] = []
        var events: [ChatEvent] = []
        var receiptsOwed = 0
        /// The contact showed it holds a session this side answered: receipts and notices
        /// held back for it go now.
        var sessionsConfirmed = false
        /// The `groupSync`s this batch sent, by what made it send them (`tellChanges`): not
        /// sent again in this run once it commits.
        var syncsSent: [(PairwiseChannel, [UInt8])] = []
        /// Conversations whose ratchet moved as their envelopes opened: their state commits
        /// with what they carried, so a used key is gone from the store with it.
        var ratchetsMoved: [ObjectIdentifier: PairwiseChannel] = [:]
        /// Groups whose log took changes from someone: the other members are told its heads
        /// (`tellHeads`), so a change reaches whoever lacks it while nobody writes.
        var logsGrew: [(ConversationID, from: ContactID)] = []

        /// Nothing here needs to happen before the next batch is stored: acknowledgements,
        /// events and receipts only. A batch that answers a handshake, starts a session or
        /// changes keys is synced and acted on at once.
        var canWaitForDisk: Bool {
            replies.isEmpty && sessionsStarted.isEmpty && resendQueued.isEmpty && rebuild.isEmpty && keysDontMatch.isEmpty && !contactsAdded
        }
    }

    /// Stores everything in `batch` in one transaction, then acknowledges it to the relay:
    /// nothing is acknowledged that is not durably stored (or deliberately dropped).
    ///
    /// The commit does not wait for the disk (group commit, `WALSync`): the WAL is synced on
    /// a thread of its own while the engine stores the next batch, and this batch's
    /// acknowledgements, events and receipts wait for that sync (`finishDurable`). Waiting
    /// for the disk after every batch left the engine thread idle a tenth of a backlog's
    /// drain. What cannot wait, and a batch with nothing queued behind it, is synced here.
    func handleDeliveries(_ batch: [Arrival]) throws(EngineError) {
        thread.check()
        // Cover and dummies leave no trace: acknowledged, never stored. A batch of nothing
        // else opens no transaction.
        // Each conversation's state as it was: a batch that does not commit leaves its
        // ratchets where they were (the shutdown that follows stores them as they are, and a
        // key used for a frame the relay hands again would not open it).
        let statesBefore = channels.values.map { ($0, $0.saved) }
        var batch = batch, dropped: [Arrival] = [], openedHere: [ObjectIdentifier: Opening] = [:]
        batch.removeAll { arrival in
            switch triage(arrival.inbound) {
            case .store: return false
            case .opened(let opening):
                openedHere[ObjectIdentifier(arrival.inbound)] = opening
                return false
            case .traceless:
                dropped.append(arrival)
                return true
            }
        }
        if !dropped.isEmpty {
            for (connection, inbound) in dropped where connections[connection.address] === connection {
                try? connection.client?.acknowledge([inbound.delivery.id], flush: true)
            }
            let own = dropped.filter { if case .own = $0.inbound.delivery.origin { true } else { false } }.count
            log.debug("dropped \(dropped.count - own) dummy frame(s) and \(own) cover frame(s) of its own without a trace")
            guard !batch.isEmpty else { return }
        }
        var after = AfterCommit()
        do {
            try AccountService.wrap {
                try store.transactionSyncedLater { tx in
                    for (connection, inbound) in batch {
                        try receive(inbound, on: connection, opened: openedHere[ObjectIdentifier(inbound)], tx, &after)
                        after.acknowledgements[ObjectIdentifier(connection), default: (connection, [])].1.append(inbound.delivery.id)
                    }
                    try storeIncoming(&after, tx)
                    try transfers.syncPartialFiles(&after, tx, context: self)
                    for channel in after.ratchetsMoved.values { try persist(channel, tx) }
                }
            }
        } catch {
            for (channel, saved) in statesBefore { channel.saved = saved }
            throw error
        }
        // Only while more is waiting: a lone batch (a message as it is sent) is synced here,
        // without the hand-over to the sync thread and back.
        if after.canWaitForDisk && policy.groupsCommits && inbox.hasItems {
            commits.awaitingDisk.append((commits.walSync.request(), after))
            return
        }
        try AccountService.wrap { try commits.walSync.syncNow() }
        try finishAwaitingDisk(through: commits.walSync.lastRequested)
        try finish(after)
    }

    /// The sync thread reported: acts on every batch its sync made durable.
    func finishDurable(_ result: Result<UInt64, StoreError>) throws(EngineError) {
        switch result {
        case .success(let request): try finishAwaitingDisk(through: request)
        case .failure(let error): throw EngineError.store(error)
        }
    }

    func finishAwaitingDisk(through request: UInt64) throws(EngineError) {
        // Receipts read from the store waited for the start-up sync.
        if commits.durableThrough < commits.startupSync && request >= commits.startupSync { receipts.schedule(urgent: true, context: self) }
        commits.durableThrough = max(commits.durableThrough, request)
        while let first = commits.awaitingDisk.first, first.request <= request {
            commits.awaitingDisk.removeFirst()
            try finish(first.after)
        }
    }

    /// What a committed batch does once it is durable.
    private func finish(_ after: AfterCommit) throws(EngineError) {
        for (channel, owed) in after.stored { channel.storedThisRun.stored(owed) }
        for (channel, key) in after.syncsSent { channel.sentSync(for: key) }
        for (channel, reply) in after.replies {
            do { try sendOnLink(channel, reply, as: .control(channel.contact.id, reply)) } catch { log("cannot answer \(channel.contact.name): \(error)") }
        }
        for (connection, ids) in after.acknowledgements.values {
            // Only to the client that delivered them (a reconnect has its own).
            guard let client = connection.client, connections[connection.address] === connection else { continue }
            var rest = ids[...]
            while !rest.isEmpty {
                let chunk = rest.prefix(RelayProtocol.maximumAcknowledgementsPerFrame)
                rest = rest.dropFirst(chunk.count)
                try? client.acknowledge(Array(chunk), flush: rest.isEmpty)
            }
        }
        for event in after.events { emit(event) }
        for channel in after.sessionsStarted {
            log("secure session with \(channel.contact.name) started")
            try sessionReady(channel)
        }
        for channel in after.resendQueued { try flushOutbox(channel) }
        for (conversation, from) in after.logsGrew {
            let (group, members) = try AccountService.wrap { try store.transaction { tx in (try tx.group(conversation), try tx.currentMembers(conversation)) } }
            guard let group, group.state == .current, !group.isBlocked, !group.heads.isEmpty else { continue }
            for member in members where member != from { if let channel = channels[member] { sendHeads(of: group, to: channel) } }
        }
        for contactID in after.rebuild { try rebuild(contactID) }
        // People a group brought in: a channel each, to meet them at the relay.
        if after.contactsAdded { try reloadConversations() }
        for channel in after.keysDontMatch { leaveLink(channel, .detached) }
        for path in after.filesToRemove { unlink(path) }
        if !after.unsent.isEmpty {
            do { try account.removeOutside(after.unsent) } catch { log("a deleted message's traces stay until the next pass: \(error)") }
        }
        for (row, (channel, id, chunks, complete)) in after.fileProgress { transfers.reportFileProgress(row, id, chunks, complete: complete, channel, context: self) }
        for (channel, id, decision) in after.refusals { transfers.tellFileRefused(id, decision, channel, context: self) }
        for channel in channels.values where channel.hasSession { try Recovery.sendNoticeIfNeeded(channel, context: self) }
        if !after.sessionsStarted.isEmpty || after.sessionsConfirmed || after.receiptsOwed > 0 {
            receipts.schedule(urgent: !after.sessionsStarted.isEmpty || after.sessionsConfirmed || after.receiptsOwed >= settings.receiptBatch,
                              context: self)
        }
    }

    /// What a delivery needs before the batch's transaction. Dropped without a trace: this
    /// mailbox's own cover, or a dummy (an empty cover envelope) in a session it does not
    /// confirm. A session's first frame from the peer confirms it, whatever its kind, and
    /// goes the way of every frame.
    enum Triage {
        /// Stored in the transaction, opened there.
        case store
        /// Stored in the transaction, opened here already (its ratchet moved).
        case opened(Opening)
        /// Acknowledged, never stored: cover of its own, or a dummy from the peer (an empty
        /// cover envelope that confirms nothing).
        case traceless
    }

    /// The reader thread's opening is taken here (`usable`: a ratchet's moves past it), and a
    /// cover envelope it could not open is opened here, before any transaction: a dummy among
    /// them is traceless. Its ratchet moves in memory and is stored with the next commit (a
    /// dummy's key opens nothing worth erasing: its body is empty).
    func triage(_ inbound: Inbound) -> Triage {
        switch inbound.delivery.origin {
        case .own:
            return .traceless
        case .invite:
            return .store
        case .link(let code):
            let known = channels.codeIndex[HashedBytes(code)].flatMap { channels[$0] }
            let opening: Opening
            if let opened = inbound.opened {
                guard let usable = usable(opened, known: known) else { return .store }
                opening = usable
            } else {
                guard let channel = known, let bytes = LinkFrame.envelopeBytes(in: inbound.delivery.payloadBytes),
                      let header = try? Envelope.openHeader(bytes, conversation: channel.secret), header.kind == .cover,
                      header.ratchet != nil, var saved = channel.saved, let body = try? saved.open(bytes, header: header, at: now)
                else { return .store }
                channel.saved = saved
                opening = (channel, header, body, nil)
            }
            if opening.header.ratchet != nil { opening.conversation.receivingSession = opening.header.sessionID }
            let dummy = opening.header.kind == .cover && opening.body?.isEmpty == true && !confirms(opening.header, in: opening.conversation)
            return dummy ? .traceless : .opened(opening)
        }
    }

    /// Whether a frame that opened in `conversation` shows that the peer holds the session
    /// this side sends in until it is confirmed.
    private func confirms(_ header: EnvelopeHeader, in channel: PairwiseChannel) -> Bool {
        guard let saved = channel.saved else { return false }
        return (saved.sendingUntilConfirmed != nil || !saved.peerHoldsCurrent) && header.sessionID == saved.current?.id
    }

    private func receive(_ inbound: Inbound, on connection: RelayConnection, opened openedHere: Opening?, _ tx: StoreTransaction,
                         _ after: inout AfterCommit) throws {
        let delivery = inbound.delivery
        switch delivery.origin {
        case .own:
            return
        case .invite:
            try receiveRequest(delivery.payload, tx, &after)
        case .link(let code):
            if let openedHere {
                // Opened before the transaction (by the reader thread, or a cover here).
                if openedHere.header.ratchet != nil {
                    after.ratchetsMoved[ObjectIdentifier(openedHere.conversation)] = openedHere.conversation
                }
                return try receiveEnvelope(openedHere, at: delivery.heldAt, tx, &after)
            }
            let known = channels.codeIndex[HashedBytes(code)].flatMap { channels[$0] }
            guard let frame = LinkFrame(delivery.payloadBytes) else { return rejectForged("an unreadable frame") }
            switch frame {
            case .handshakeFirst(let bytes):
                // Only on the live link (a handshake held from an earlier one is stale), once.
                guard let channel = known, let id = delivery.link, channel.role == .responder,
                      let link = channel.linkState.link else { return }
                switch channel.apply(.firstMessage(link: id, generation: connection.generation), at: now) {
                case .success: try respond(channel, to: bytes, code: link.code, tx, &after)
                case .failure(.secondHandshake): return rejectForged("a second handshake from \(channel.contact.name) on one link")
                case .failure: return
                }
            case .handshakeReply(let bytes):
                guard let channel = known, let id = delivery.link, case .success = channel.apply(.reply(link: id), at: now),
                      let initiator = channel.linkState.initiator else { return }
                do {
                    let session = try initiator.finish(bytes)
                    try begin(session, in: channel, asResponder: false, tx, &after)
                } catch {
                    try handshakeFailed(channel, error, tx, &after)
                }
            case .envelope(let bytes):
                guard let opening = try openEnvelope(bytes, known: known, &after) else { return }
                try receiveEnvelope(opening, at: delivery.heldAt, tx, &after)
            }
        }
    }

    /// The session can carry frames (for a responder: the relay took its reply): the
    /// initiator's confirmation, then what waits.
    func sessionReady(_ channel: PairwiseChannel) throws(EngineError) {
        guard channel.hasSession else { return }
        if channel.role == .initiator { sendConfirmation(channel) }
        try sendWhatWaits(channel)
    }

    /// What waited for a session, or for the user to verify the contact's new device: the
    /// notice, a key rotation, then the outbox (which says what it holds back while the
    /// device is not verified), and receipts soon.
    func sendWhatWaits(_ channel: PairwiseChannel) throws(EngineError) {
        guard channel.hasSession else { return }
        try Recovery.sendNoticeIfNeeded(channel, context: self)
        try announceRotationIfNeeded(channel)
        try tellHeads(channel)
        try flushOutbox(channel, ignoringBackoff: true)
        receipts.schedule(urgent: true, context: self)
    }

    private func respond(_ channel: PairwiseChannel, to first: [UInt8], code: [UInt8], _ tx: StoreTransaction,
                         _ after: inout AfterCommit) throws {
        do {
            let responder = try Handshake.Responder(
                me: channel.me, peer: .init(accountKey: channel.contact.accountKey, deviceKey: channel.contact.deviceKey),
                reconnectCounter: channel.saved?.reconnectCounter, prologue: Handshake.linkPrologue(code: code))
            let (reply, session) = try responder.respond(to: first)
            after.replies.append((channel, .handshakeReply(reply)))
            try begin(session, in: channel, asResponder: true, tx, &after)
        } catch {
            try handshakeFailed(channel, error, tx, &after)
        }
    }

    private func begin(_ session: Session, in channel: PairwiseChannel, asResponder: Bool, _ tx: StoreTransaction,
                       _ after: inout AfterCommit) throws {
        // This side knew the conversation before (it kept state): the peer starting over
        // means the peer lost its state. Without state here it is a first meeting, or we
        // are the ones starting over.
        let hadState = channel.saved != nil
        // A responder's session carries nothing until the relay took its reply.
        guard case .success = channel.apply(asResponder ? .answered(session.peer) : .finished(session.peer), at: now)
        else { return }
        try Recovery.sessionBegan(channel, hadState: hadState, peerStartedOver: session.peer.startedOver, tx)
        if hadState && session.peer.startedOver,
           try Groups.handOn(to: channel.contact, me: identity.accountKey.publicKey, tx, at: now, clock: clock) > 0 {
            log("\(channel.contact.name) started over: their groups are handed to them again")
        }
        var saved = channel.saved ?? SavedSessionState()
        // A responder keeps sending in the previous session until the initiator's first frame
        // shows it completed the handshake (SavedSessionState.begin).
        saved.begin(session, at: now, confirmed: !asResponder || session.peer.startedOver, peerHolds: !asResponder)
        channel.saved = saved
        channel.traffic.forget(.replaced)
        try persist(channel, tx)
        channel.newDeviceRow = session.peer.deviceKeyIsPinned ? nil : try newDeviceRow(channel, session.peer.deviceKey, tx, &after)
        channel.sessionDevices[session.keys.sessionID] = session.peer.deviceKey
        after.sessionsStarted.append(channel)
    }

    /// The contact's session comes from a device whose key the user has not pinned: say so,
    /// once per device since their code was last entered. Returns the row's position: what
    /// the user sends by hand below it goes to that device (`SendPolicy`). Someone known only
    /// through groups has no conversation of their own: the row goes in each group this side
    /// is in with them, naming them, and nothing goes to that device until their code is
    /// entered here (no position: `SendPolicy` holds it).
    private func newDeviceRow(_ channel: PairwiseChannel, _ deviceKey: [UInt8], _ tx: StoreTransaction,
                              _ after: inout AfterCommit) throws -> Int64? {
        let contact = channel.contact
        let kind = SystemRowKind.newDevice(deviceKey)
        guard contact.kind == .contact else {
            log("\(contact.name) is using a device whose key is not pinned; nothing goes to it until their code is entered here")
            try memberRow(contact, kind, RecoveryRows.newDevice(name: contact.name), tx, &after)
            return nil
        }
        log("\(contact.name) is using a device whose key is not pinned; only what is sent by hand goes to it until their code is entered again")
        if let shown = try tx.systemRowPosition(contact: contact.id, kind: kind, since: contact.keysChangedAt) { return shown }
        let row = try tx.addSystemRow(contact: contact.id, kind: kind, text: RecoveryRows.newDevice(name: contact.name), action: nil,
                                      messageIDs: [], at: now)
        after.events.append(.rowAdded(conversation: contact.id.conversation))
        return row.position
    }

    /// A row about someone known only through groups, once since their keys last changed, in
    /// each group this side is in with them (they have no conversation of their own).
    private func memberRow(_ member: Contact, _ kind: SystemRowKind, _ text: String, _ tx: StoreTransaction,
                           _ after: inout AfterCommit) throws {
        for group in try tx.groups() where group.state == .current {
            guard try tx.currentMembers(group.conversation).contains(member.id),
                  try tx.systemRowPosition(conversation: group.conversation, member: member.id, kind: kind, since: member.keysChangedAt) == nil
            else { continue }
            _ = try tx.addSystemRow(conversation: group.conversation, member: member.id, kind: kind, text: text, action: nil, messageIDs: [], at: now)
            after.events.append(.rowAdded(conversation: group.conversation))
        }
    }

    /// A handshake that proved an account key other than the pinned one puts the contact in
    /// Keys don't match, with a row saying so; nothing is sent to it until its code is entered
    /// again (`Contacts.add`). Any other failure is a forged or damaged frame.
    private func handshakeFailed(_ channel: PairwiseChannel, _ error: Error, _ tx: StoreTransaction,
                                 _ after: inout AfterCommit) throws {
        guard case HandshakeError.keysDontMatch = error else {
            return rejectForged("a handshake from \(channel.contact.name) that failed (\(error))")
        }
        let contact = channel.contact
        log("\(contact.name) presented an account key other than the pinned one: Keys don't match")
        guard contact.state != .keysDontMatch else { return }
        try tx.setState(contact: contact.id, .keysDontMatch)
        channel.contact.state = .keysDontMatch
        if contact.kind == .member {
            try memberRow(contact, .keysDontMatch, RecoveryRows.keysDontMatch(name: contact.name), tx, &after)
        } else {
            _ = try tx.addSystemRow(contact: contact.id, kind: .keysDontMatch, text: RecoveryRows.keysDontMatch(name: contact.name),
                                    action: nil, messageIDs: [], at: now)
            after.events.append(.rowAdded(conversation: contact.id.conversation))
        }
        after.events.append(.conversationsChanged)
        after.keysDontMatch.append(channel)
    }

    func rejectForged(_ what: String) {
        forgedFrames += 1
        log("rejected \(what) (\(forgedFrames) rejected so far)")
    }

    /// The conversation a frame belongs to: the one whose code it came with, else whichever
    /// conversation's header key opens it (a frame held under an older code).
    private func open(_ bytes: [UInt8], known: PairwiseChannel?) -> (PairwiseChannel, EnvelopeHeader)? {
        if let known, let header = try? Envelope.openHeader(bytes, conversation: known.secret) { return (known, header) }
        for channel in channels.values where channel !== known {
            if let header = try? Envelope.openHeader(bytes, conversation: channel.secret) { return (channel, header) }
        }
        for channel in channels.values {
            for former in channel.formerSecrets {
                if let header = try? Envelope.openHeader(bytes, conversation: former) { return (channel, header) }
            }
        }
        return nil
    }

    /// An envelope opened: its conversation, header, and body if it opened, with a message's
    /// content when the reader thread decoded it already.
    typealias Opening = (conversation: PairwiseChannel, header: EnvelopeHeader, body: [UInt8]?, content: MessageContent?)

    /// The reader thread's opening, if that conversation still holds the secret and the
    /// session key that made it (a copy of the keys it had may be stale).
    /// For a ratchet's frame, the conversation's ratchet is moved past it here, and the
    /// opening used only when its own key for the frame is the reader's.
    private func usable(_ opened: OpenedEnvelope, known: PairwiseChannel?) -> Opening? {
        guard let channel = channels[opened.contact], known == nil || known === channel,
              channel.secret.key === opened.secretKey, var saved = channel.saved else { return nil }
        if opened.header.ratchet != nil {
            guard let key = try? saved.takeKey(opened.header, at: now), key.sameBytes(as: opened.sessionKey) else { return nil }
            channel.saved = saved
        } else {
            guard saved.holdsReceiveKey(opened.sessionKey) else { return nil }
        }
        return (channel, opened.header, opened.body, opened.content)
    }

    /// Opens an envelope here, its conversation's ratchet moved past it. nil (said so): the
    /// header opens with no conversation's secret, or the body does not open with the key its
    /// header names (altered on the way: never shown, never reported as undecryptable), or
    /// that key opened a body already (a frame handed again: what it carried was taken). A
    /// body whose key this side no longer holds (a session lost with the state, a key
    /// dropped over the ratchet's bounds) comes back as nil: that message cannot be read.
    private func openEnvelope(_ bytes: [UInt8], known: PairwiseChannel?, _ after: inout AfterCommit) throws -> Opening? {
        guard let (channel, header) = open(bytes, known: known) else {
            rejectForged("a frame that no conversation can read")
            return nil
        }
        guard var saved = channel.saved else { return (channel, header, nil, nil) }
        let body: [UInt8]?
        do {
            body = try saved.open(bytes, header: header, at: now)
            channel.saved = saved
            if header.ratchet != nil {
                after.ratchetsMoved[ObjectIdentifier(channel)] = channel
                channel.receivingSession = header.sessionID
            }
        } catch .wrongSession {
            body = nil
        } catch .replayed {
            log("a frame from \(channel.contact.name) handed again (its key opened one already): dropped")
            return nil
        } catch {
            rejectForged("a frame from \(channel.contact.name) that was altered (\(error))")
            return nil
        }
        return (channel, header, body, nil)
    }

    private func receiveEnvelope(_ opening: Opening, at heldAt: Int64, _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        let (channel, header, body, decoded) = opening
        let contact = channel.contact
        if body != nil, confirms(header, in: channel) {
            // The peer holds the new session: send in it from now on.
            channel.saved?.confirm()
            after.sessionsConfirmed = true
        }
        guard let body else {
            // Its id is readable, its body is not: this side lost the session it was sent in.
            if [.message, .timedMessage, .groupMessage].contains(header.kind) || header.isNewerItem {
                _ = try tx.recordUndecryptable(contact: contact.id, id: header.messageID, session: header.sessionID, at: now)
                log("a message from \(contact.name) cannot be decrypted on this device")
            } else if header.kind == .chunk, try !fileIsWhole(contact.id, header.messageID, tx) {
                // A file whose chunks were sealed in a session lost here: it is asked for again.
                _ = try tx.recordUndecryptable(contact: contact.id, id: header.messageID, session: header.sessionID, at: now)
            }
            return
        }
        if contact.kind == .member, !Self.memberKinds.contains(header.kind) {
            // Known only through a group: no one-to-one conversation to hold anything else.
            return log("dropped \(header.kind) from \(contact.name), who is only a member of a group here")
        }
        switch header.kind {
        case .message, .timedMessage:
            guard !contact.isBlocked, !contact.isDeleted else { return }
            var encoded = body
            if header.kind == .timedMessage {
                // The timer it was written with, then its content.
                var r = ByteReader(body)
                guard let seconds = try? r.u32(), let timer = DisappearingTimer(rawValue: seconds), timer != .off else {
                    return rejectForged("a message from \(contact.name) with a timer that is not one")
                }
                encoded = Array(body.dropFirst(4))
                after.timers.append((channel, header.messageID, timer))
            }
            let content: MessageContent
            if let decoded, header.kind == .message { content = decoded } else {
                do { content = try MessageContent(decoding: encoded) } catch {
                    return rejectForged("a message from \(contact.name) whose content does not decode (\(error))")
                }
            }
            if case .control(.groupChanges) = content {
                return rejectForged("group changes from \(contact.name) outside a group message")
            }
            if let target = content.refersTo, try tx.messageElsewhere(id: target, than: contact.id.conversation, sharedWith: contact.id) {
                return rejectForged("\(content.itemWords) from \(contact.name) \(content.quoted != nil ? "quoting" : "to") a message of another conversation")
            }
            guard try mayWait(content, in: contact.id.conversation, from: contact, tx) else { return }
            if case .control(.timerChanged(_, let counter)) = content,
               !TimerPolicy.isBelievable(counter, after: try tx.conversationTimer(contact: contact.id).setBy) {
                return rejectForged("a timer change from \(contact.name) whose counter is far past every one seen")
            }
            // What this version cannot show (a timer change from a later version) is kept as it
            // came and shown as a row saying so (`MessageContent.displayText`).
            after.incoming.append((channel, incoming(header, content, encoded, heldAt)))
        case .groupMessage:
            guard !contact.isBlocked, !contact.isDeleted else { return }
            try receiveGroupMessage(body, header, heldAt, from: channel, tx, &after)
        case .groupReceiptDelivered, .groupReceiptRead:
            guard let (groupID, ids) = GroupWire.receipt(body) else { return rejectForged("a group receipt from \(contact.name) that does not read") }
            guard let group = try tx.group(id: groupID.bytes) else { return }
            try raiseGroupDeliveries(group.conversation, ids, header.kind == .groupReceiptRead ? .readReceipt : .deliveredReceipt,
                                     exceptAttachments: header.kind == .groupReceiptDelivered, from: channel, tx, &after)
        case .groupHeads:
            guard !contact.isBlocked, !contact.isDeleted else { return }
            guard let (groupID, heads) = GroupWire.heads(body) else { return rejectForged("a group's heads from \(contact.name) that do not read") }
            guard let group = try tx.group(id: groupID.bytes), group.state == .current else { return }
            guard try tx.currentMembers(group.conversation).contains(contact.id) else {
                return try handRemoval(to: channel, heads: heads, of: group, tx, &after)
            }
            try compareHeads(heads, of: group, from: channel, tx, &after)
        case .groupSync:
            guard !contact.isBlocked, !contact.isDeleted else { return }
            guard let (groupID, ids) = GroupWire.sync(body) else { return rejectForged("a group's changes from \(contact.name) that do not read") }
            guard let group = try tx.group(id: groupID.bytes) else { return }
            try answerSync(ids, of: group, from: channel, tx, &after)
        case .chunk:
            try transfers.receiveChunk(body, id: header.messageID, sealedIn: header.sessionID, in: channel, tx, &after, context: self)
        case .fileRefused:
            try transfers.fileRefused(body, id: header.messageID, in: channel, tx, &after, context: self)
        case .fileProgress:
            var r = ByteReader(body)
            guard let chunks = try? r.u32(), let message = try tx.message(to: contact.id, id: header.messageID) else { return }
            let known = channel.traffic.peerFileProgress[message.rowID]?.chunks ?? 0
            channel.traffic.peerFileProgress[message.rowID] = (max(known, Int(chunks)), ticks)
            // The receiver took what the relay held: room there again for what it refused.
            if channel.roomRefused.contains(message.rowID) {
                try tx.attemptNow(DeliveryKey(message: message.rowID, member: contact.id), at: now)
            }
            after.resend(on: channel)
        case .fileDelivered:
            try receiveFileDelivered(Self.receiptIDs(body), from: channel, tx, &after)
        case .receiptDelivered, .receiptRead:
            let event: StatusEvent = header.kind == .receiptRead ? .readReceipt : .deliveredReceipt
            // An attachment's item was stored there; its Delivered comes with the whole file.
            for change in try tx.raiseStatuses(contact: contact.id, ids: Self.receiptIDs(body), event: event,
                                               exceptAttachments: header.kind == .receiptDelivered, at: now) {
                channel.acknowledged(change.message)
                if change.changed { after.events.append(.statusChanged(conversation: contact.id.conversation, id: change.id, status: change.current)) }
            }
        case .notice:
            try Recovery.receiveNotice(body, in: channel, sealedIn: header.sessionID, tx, &after, context: self)
        case .keyRotation:
            try receiveKeyRotation(body, in: channel, tx, &after)
        case .keyRotationAccepted:
            try receiveRotationAccepted(in: channel, tx, &after)
        case .cover:
            break
        case .newer:
            // An item of a kind a later version wrote: kept whole, shown as needing a newer
            // rChat, Delivered (it was stored). What a later version lets pass unseen is dropped.
            guard header.isNewerItem, !contact.isBlocked, !contact.isDeleted else { return }
            let content = MessageContent.newer(.envelope(kind: header.wireKind, body: body))
            let encoded = content.encoded()
            guard encoded.count <= MessageContent.maximumEncodedBytes else {
                return rejectForged("an item of a newer kind from \(contact.name) longer than any envelope carries")
            }
            after.incoming.append((channel, incoming(header, content, encoded, heldAt)))
        }
    }

    /// What a person known only through a group may send: a group's messages, receipts and
    /// files (a file's chunks, progress, refusal and Delivered name a group message by id),
    /// what their log of a group holds and its heads, could-not-read notices (recovery per member: its ids name group messages), their
    /// key rotations and acceptances of ours (the channel's keys), and cover.
    static let memberKinds: Set<EnvelopeKind> = [.groupMessage, .groupReceiptDelivered, .groupReceiptRead, .groupSync, .groupHeads, .chunk, .fileProgress,
                                                 .fileRefused, .fileDelivered, .notice, .keyRotation, .keyRotationAccepted, .cover]

    /// Whole files' Delivered from the channel's contact: each id names a file this side sent
    /// them, in their direct conversation or in a group (`message(to:id:)`); that delivery
    /// alone is raised.
    private func receiveFileDelivered(_ ids: [MessageID], from channel: PairwiseChannel, _ tx: StoreTransaction,
                                      _ after: inout AfterCommit) throws {
        let contact = channel.contact
        var direct: [MessageID] = [], grouped: [ConversationID: [MessageID]] = [:]
        for id in ids {
            guard let message = try tx.message(to: contact.id, id: id), message.content.isAttachment else { continue }
            if message.conversation == contact.id.conversation { direct.append(id) } else { grouped[message.conversation, default: []].append(id) }
        }
        for change in try tx.raiseStatuses(contact: contact.id, ids: direct, event: .deliveredReceipt, exceptAttachments: false, at: now) {
            channel.acknowledged(change.message)
            if change.changed { after.events.append(.statusChanged(conversation: contact.id.conversation, id: change.id, status: change.current)) }
        }
        for (conversation, ids) in grouped.sorted(by: { $0.key.rawValue > $1.key.rawValue }) {
            try raiseGroupDeliveries(conversation, ids, .deliveredReceipt, exceptAttachments: false, from: channel, tx, &after)
        }
    }

    /// A receipt of the channel's contact for a group's messages: their deliveries only; the
    /// view hears what each message shows now.
    private func raiseGroupDeliveries(_ conversation: ConversationID, _ ids: [MessageID], _ event: StatusEvent, exceptAttachments: Bool,
                                      from channel: PairwiseChannel, _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        for change in try tx.raiseDeliveries(conversation: conversation, member: channel.contact.id, ids: ids, event: event,
                                             exceptAttachments: exceptAttachments, at: now) {
            channel.acknowledged(change.message)
            if change.changed {
                after.events.append(.statusChanged(conversation: conversation, id: change.id,
                                                   status: try tx.deliverySummary(message: change.message).shown ?? change.current))
            }
        }
    }

    /// A group's message from the channel's contact: changes to the group's log (taken, the
    /// group made if this side is in it), or something to show — stored in the group's
    /// conversation only when its author is a current member of the roster this side holds.
    /// One for a group not held here, or from someone not in the roster whose log holds
    /// changes this side lacks (asked for: `compareHeads`), waits for a log that brings them
    /// (`GroupWaiting`).
    private func receiveGroupMessage(_ body: [UInt8], _ header: EnvelopeHeader, _ heldAt: Int64, from channel: PairwiseChannel,
                                     _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        let contact = channel.contact
        guard let (groupID, timer, heads, encoded) = GroupWire.message(body) else {
            return rejectForged("a group message from \(contact.name) that does not read")
        }
        let content: MessageContent
        do { content = try MessageContent(decoding: encoded) } catch {
            return rejectForged("a group message from \(contact.name) whose content does not decode (\(error))")
        }
        let item = IncomingMessage(id: header.messageID, content: content, encodedContent: encoded, sentAt: heldAt,
                                   seq: Int64(bitPattern: header.sequence))
        guard case .control(.groupChanges(let changes)) = content else {
            let group = try tx.group(id: groupID.bytes)
            let waitsFor: String? = if let group {
                try compareHeads(heads, of: group, from: channel, tx, &after) && !tx.currentMembers(group.conversation).contains(contact.id)
                    ? "changes to the group this account lacks" : nil
            } else { "a group this account does not hold yet" }
            guard let group, waitsFor == nil else {
                let kept = try keepWaiting(item, body: body, group: groupID, from: contact, tx)
                return log(kept ? "a group message from \(contact.name) waits for \(waitsFor ?? "")"
                                : "a group message from \(contact.name) dropped: \(GroupWaiting.perAuthor) of theirs wait for groups already")
            }
            try handRemoval(to: channel, heads: heads, of: group, tx, &after)
            return try acceptGroupItem(item, timer: timer, in: group.conversation, from: channel, tx, &after)
        }
        try receiveGroupChanges(changes, item, timer: timer, heads: heads, groupID: groupID, body: body, from: channel, tx, &after)
    }

    /// Someone this log took out of the group (removed, or their leave) by a change their
    /// heads had not seen, writing or telling their heads as if still in — away when it was
    /// made, and the one who made it lost what it queued for them (a reinstall) — is handed
    /// by an admin what their log lacks, to them alone (parent first): the changes that say
    /// they are out. Nobody else would tell them: the members they still write to drop what
    /// they write. Once per what is on its way to them; nothing for one still in the group.
    private func handRemoval(to channel: PairwiseChannel, heads: [ChangeID], of group: StoredGroup,
                             _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        let contact = channel.contact
        guard !heads.isEmpty, group.state == .current, !group.isBlocked,
              try !tx.currentMembers(group.conversation).contains(contact.id),
              let log = try Groups.log(group, tx), log.roster.isAdmin(identity.accountKey.publicKey),
              ([contact.accountKey] + (contact.previousAccountKey.map { [$0] } ?? [])).contains(where: { log.tookOut($0, unseenAt: heads) })
        else { return }
        try hand(log.missing(from: heads), of: log, in: group, to: channel,
                 saying: { "\(contact.name) writes to \(log.roster.name) as if still in it: they are handed the \($0) change(s) that say otherwise" }, tx, &after)
    }

    /// Changes of `log` handed to the channel's contact alone (`Groups.sendChanges`), but for
    /// those queued for them already (a change written here, or handed to them): they would
    /// go twice.
    private func hand(_ ids: [ChangeID], of log: GroupLog, in group: StoredGroup, to channel: PairwiseChannel, saying why: (Int) -> String,
                      _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        let onTheirWay = Set(try tx.contentsOnTheirWay(conversation: group.conversation, to: channel.contact.id).flatMap { content -> [ChangeID] in
            guard case .control(.groupChanges(let changes)) = content else { return [] }
            return changes.compactMap { try? MembershipChange(decoding: $0).id }
        })
        let missing = ids.filter { !onTheirWay.contains($0) }
        guard !missing.isEmpty else { return }
        self.log(why(missing.count))
        try Groups.sendChanges(missing, of: log, in: group.conversation, to: channel.contact, tx, at: now, clock: clock)
        after.resend(on: channel)
    }

    /// What a member's log heads say of the two logs (anti-entropy): when they differ from
    /// this side's, it tells them every change it holds (`groupSync`), once per member, their
    /// heads and its own in a run; they hand on exactly what it lacks and ask back for what
    /// they lack (`answerSync`). Nothing for a group this side is no longer in or blocked, or
    /// for someone never in it. Whether they hold changes this side lacks.
    @discardableResult
    private func compareHeads(_ theirs: [ChangeID], of group: StoredGroup, from channel: PairwiseChannel,
                              _ tx: StoreTransaction, _ after: inout AfterCommit) throws -> Bool {
        let bytes = theirs.flatMap(\.bytes)
        guard !theirs.isEmpty, bytes != group.heads else { return false }
        let held = try tx.takenChanges(group.conversation, among: theirs.map(\.bytes))
        let lacking = theirs.contains { !held.contains($0.bytes) }
        try tellChanges(of: group, to: channel, key: [0] + bytes, tx, &after)
        return lacking
    }

    /// A member told this side every change they hold: what this log holds and they lack is
    /// handed to them alone (`Groups.sendChanges`, parent first); if they hold changes this
    /// log lacks, it tells them its own, once per what they told.
    private func answerSync(_ ids: [ChangeID], of group: StoredGroup, from channel: PairwiseChannel,
                            _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        guard group.state == .current, !group.isBlocked,
              try tx.members(group.conversation).contains(where: { $0.contact == channel.contact.id }),
              let log = try Groups.log(group, tx) else { return }
        try hand(log.missing(from: ids), of: log, in: group, to: channel, saying: { "\(channel.contact.name)'s log of \(log.roster.name) lacks \($0) change(s): they are handed them" }, tx, &after)
        if !log.unknown(ids).isEmpty { try tellChanges(of: group, to: channel, key: [1] + ids.flatMap(\.bytes), log: log, tx, &after) }
    }

    /// At each session with someone, and to the other members once a group's log took
    /// changes from one (`AfterCommit.logsGrew`): the heads of each group this side is in
    /// with them (`groupHeads`), so two logs that differ compare
    /// themselves (`compareHeads` there) even while nobody writes.
    func tellHeads(_ channel: PairwiseChannel) throws(EngineError) {
        guard channel.carries(.receipt) else { return }
        let contact = channel.contact.id
        let groups = try AccountService.wrap {
            try store.transaction { tx in
                try tx.groups().filter { group in
                    guard group.state == .current, !group.isBlocked, !group.heads.isEmpty else { return false }
                    return try tx.currentMembers(group.conversation).contains(contact)
                }
            }
        }
        for group in groups { sendHeads(of: group, to: channel) }
    }

    /// One `groupHeads` to the channel's contact, if its session carries it.
    private func sendHeads(of group: StoredGroup, to channel: PairwiseChannel) {
        guard channel.carries(.receipt), var saved = channel.saved,
              let envelope = saved.seal(kind: .groupHeads, messageID: .fresh(clock),
                                        body: GroupWire.headsBody(group: group.groupID, heads: group.heads), conversation: channel.secret)
        else { return }
        channel.saved = saved
        do { try sendOnLink(channel, .envelope(envelope), as: .control(channel.contact.id, .envelope(envelope))) } catch {
            log("cannot tell \(channel.contact.name) the heads of a group: \(error)")
        }
    }

    /// A `groupSync` with every change this side's log holds, to the channel's contact (an
    /// `AfterCommit` reply), once per `key` and this side's heads in a run (remembered by
    /// their hash: a sync's ids may be 57 KB).
    private func tellChanges(of group: StoredGroup, to channel: PairwiseChannel, key: [UInt8], log: GroupLog? = nil,
                             _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        let key = Hash.blake2b(group.groupID + key + group.heads)
        guard group.state == .current, !group.isBlocked, !channel.hasSentSync(for: key),
              !after.syncsSent.contains(where: { $0.0 === channel && $0.1 == key }),
              try tx.members(group.conversation).contains(where: { $0.contact == channel.contact.id }),
              let log = try log ?? Groups.log(group, tx),
              var saved = channel.saved,
              let envelope = saved.seal(kind: .groupSync, messageID: .fresh(clock),
                                        body: GroupWire.syncBody(group: group.groupID, ids: log.order), conversation: channel.secret)
        else { return }
        after.syncsSent.append((channel, key))
        channel.saved = saved
        after.replies.append((channel, .envelope(envelope)))
    }

    /// A group message (its body as it came) kept until this side holds the group, within
    /// `GroupWaiting`'s bounds; whether it was kept.
    private func keepWaiting(_ item: IncomingMessage, body: [UInt8], group: GroupID, from author: Contact,
                             _ tx: StoreTransaction) throws -> Bool {
        try tx.keepWaiting(WaitingGroupMessage(author: author.id, id: item.id, body: body, seq: item.seq, sentAt: item.sentAt),
                           group: group.bytes, at: now, cutoff: now - GroupWaiting.window, limit: GroupWaiting.perAuthor)
    }

    /// Changes to a group's log in a group message: taken (`Groups.receiveChanges`), the
    /// message shown as what it did, then the sender's heads compared with the log's. One for
    /// a group not held here waits with the group's other messages. Whatever waited for the
    /// group is taken once the log judges it, in the order it came (changes taken as any log
    /// is): from authors in the roster, or whose heads the log holds now (then dropped unless
    /// they are in it); the rest waits on.
    private func receiveGroupChanges(_ changes: [[UInt8]], _ item: IncomingMessage, timer: UInt32, heads: [ChangeID], groupID: GroupID,
                                     body: [UInt8], from channel: PairwiseChannel, _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        let contact = channel.contact
        let headsBefore = try tx.group(id: groupID.bytes)?.heads
        let (received, added) = try Groups.receiveChanges(changes, group: groupID, from: contact, as: identity,
                                                          tx, at: now, clock: clock, log: { log($0) }, queued: { id in
            if let c = channels[id] { after.resend(on: c) }
        })
        if added { after.contactsAdded = true }
        let conversation: ConversationID
        switch received {
        case .dropped(let why):
            return log("a group message from \(contact.name) dropped: \(why)")
        case .notHeld(let why), .waitsForChanges(let why):
            let kept = try keepWaiting(item, body: body, group: groupID, from: contact, tx)
            if case .waitsForChanges = received, let group = try tx.group(id: groupID.bytes) {
                try compareHeads(heads, of: group, from: channel, tx, &after)
            }
            return log("group changes from \(contact.name) \(kept ? "wait" : "dropped"): \(why)")
        case .message(let c):
            conversation = c
        }
        after.events.append(.conversationsChanged)
        // Shown as what it did, from whoever `receiveChanges` took it from (a leaver's leave too).
        try acceptGroupItem(item, timer: timer, in: conversation, from: channel, memberChecked: true, tx, &after)
        guard let group = try tx.group(conversation) else { return }
        if group.heads != headsBefore, !after.logsGrew.contains(where: { $0.0 == conversation && $0.from == contact.id }) {
            after.logsGrew.append((conversation, from: contact.id))
        }
        try compareHeads(heads, of: group, from: channel, tx, &after)
        let members = Set(try tx.currentMembers(conversation))
        let judged = try tx.takeWaiting(group: groupID.bytes, cutoff: now - GroupWaiting.window) { waiting in
            guard !members.contains(waiting.author), let (_, _, heads, _) = GroupWire.message(waiting.body) else { return true }
            return try tx.takenChanges(conversation, among: heads.map(\.bytes)).count == heads.count
        }
        for waiting in judged {
            guard let author = channels[waiting.author], !author.contact.isBlocked, !author.contact.isDeleted,
                  let (_, timer, heads, encoded) = GroupWire.message(waiting.body),
                  let content = try? MessageContent(decoding: encoded) else { continue }
            let item = IncomingMessage(id: waiting.id, content: content, encodedContent: encoded, sentAt: waiting.sentAt, seq: waiting.seq)
            if case .control(.groupChanges(let more)) = content {
                try receiveGroupChanges(more, item, timer: timer, heads: heads, groupID: groupID, body: waiting.body, from: author, tx, &after)
            } else if try !tx.currentMembers(conversation).contains(waiting.author),
                      try tx.takenChanges(conversation, among: heads.map(\.bytes)).count != heads.count {
                // Judged with the roster before: a change taken since (one that waited before
                // it, in the same turn) took its author out, while it names changes not here yet
                // (their add again): it waits on for them.
                _ = try keepWaiting(item, body: waiting.body, group: groupID, from: author.contact, tx)
            } else {
                try acceptGroupItem(item, timer: timer, in: conversation, from: author, tx, &after)
            }
        }
    }

    /// A group's item from the channel's contact, to store in `conversation`: only from a
    /// current member, never in a group blocked here, with its timer.
    private func acceptGroupItem(_ item: IncomingMessage, timer: UInt32, in conversation: ConversationID, from channel: PairwiseChannel,
                                 memberChecked: Bool = false, _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        let contact = channel.contact
        guard try memberChecked || tx.members(conversation).contains(where: { $0.contact == contact.id && $0.state == .current }) else {
            return log("a group message from \(contact.name) dropped: they are not in the group")
        }
        // Blocked here: nothing of it is kept or shown (its log was taken, so the roster stays true).
        if try tx.group(conversation)?.isBlocked == true { return }
        if let target = item.content.refersTo, try tx.messageElsewhere(id: target, than: conversation, sharedWith: contact.id) {
            return rejectForged("\(item.content.itemWords) from \(contact.name) in a group \(item.content.quoted != nil ? "quoting" : "to") a message of another conversation")
        }
        guard try mayWait(item.content, in: conversation, from: contact, tx) else { return }
        if timer != 0 {
            guard let t = DisappearingTimer(rawValue: timer), t != .off else {
                return rejectForged("a group message from \(contact.name) with a timer that is not one")
            }
            after.timers.append((channel, item.id, t))
        }
        after.groupIncoming.append((channel, conversation, item))
    }

    /// A message item to store, from the envelope it came in.
    private func incoming(_ header: EnvelopeHeader, _ content: MessageContent, _ encoded: [UInt8], _ heldAt: Int64) -> IncomingMessage {
        IncomingMessage(id: header.messageID, content: content, encodedContent: encoded, sentAt: heldAt, seq: Int64(bitPattern: header.sequence))
    }

    /// Stores the batch's messages, grouped by conversation, in the open transaction; a
    /// Delivered receipt is owed from the moment it commits — and not before.
    /// Whether an incoming attachment is whole here (a late chunk of it changes nothing).
    private func fileIsWhole(_ contact: ContactID, _ id: MessageID, _ tx: StoreTransaction) throws -> Bool {
        guard let message = try tx.message(from: contact, id: id), let stored = try tx.attachment(message: message.rowID) else { return false }
        if case .complete = stored.state { return true }
        return false
    }

    func storeIncoming(_ after: inout AfterCommit, _ tx: StoreTransaction) throws {
        try storeGroupIncoming(&after, tx)
        guard !after.incoming.isEmpty else { return }
        var order: [ContactID] = []
        var groups: [ContactID: (PairwiseChannel, [IncomingMessage])] = [:]
        for (channel, message) in after.incoming {
            let id = channel.contact.id
            if groups[id] == nil { order.append(id); groups[id] = (channel, []) }
            groups[id]!.1.append(message)
        }
        after.incoming.removeAll()
        let t = now
        for id in order {
            let (channel, messages) = groups[id]!
            let stored = try tx.insertIncoming(contact: id, messages, at: t)
            after.receiptsOwed += stored.count
            after.stored.append((channel, stored.map(\.owed)))
            for message in messages {
                switch message.content {
                case .attachment(let attachment):
                    try transfers.attachmentItemStored(channel, id: message.id, attachment, tx, &after, context: self)
                case .control(.timerChanged(let timer, let counter)):
                    // Every side applies every change by the same rule, so both end on the same timer.
                    if try tx.applyTimer(timer, setBy: TimerPolicy.Change(counter: counter, id: message.id), contact: id) {
                        after.events.append(.conversationsChanged)
                    }
                case .text, .reply, .newer, .control(.groupChanges), .control(.reaction), .control(.edit), .control(.unsend), .unsent:
                    // Group changes in a one-to-one conversation change no group: kept as shown.
                    break
                }
            }
            for (c, messageID, timer) in after.timers where c === channel {
                try tx.setExpiry(contact: id, ids: [messageID], after: timer)
            }
            let contents = Dictionary(messages.map { ($0.id, $0.content) }, uniquingKeysWith: { first, _ in first })
            for message in stored {
                // An action changes what its target shows; it is no message of its own.
                guard let content = contents[message.id] else { continue }
                guard try itemStored(content, id: message.id, in: channel.directConversation, from: id, tx, &after) else {
                    try actionStored(content, id: message.id, in: channel.directConversation, author: nil, tx, &after)
                    continue
                }
                after.events.append(.newMessage(conversation: channel.directConversation, id: message.id,
                                                preview: contents[message.id]?.displayText(direction: .incoming) ?? ""))
            }
        }
    }

    /// A group's messages, each in its conversation from the channel's contact; a Delivered
    /// receipt is owed for each from the commit (by the member's mark in that conversation).
    private func storeGroupIncoming(_ after: inout AfterCommit, _ tx: StoreTransaction) throws {
        guard !after.groupIncoming.isEmpty else { return }
        let batch = after.groupIncoming
        after.groupIncoming.removeAll()
        for (channel, conversation, message) in batch {
            let stored = try tx.insertIncoming(conversation: conversation, author: channel.contact.id, [message], at: now)
            after.receiptsOwed += stored.count
            if case .attachment(let attachment) = message.content {
                try transfers.attachmentItemStored(channel, id: message.id, attachment, tx, &after, context: self)
            }
            for (c, messageID, timer) in after.timers where c === channel && messageID == message.id {
                for row in stored { try tx.setExpiry(message: row.row, after: timer) }
            }
            for row in stored {
                guard try itemStored(message.content, id: row.id, in: conversation, from: channel.contact.id, tx, &after) else {
                    try actionStored(message.content, id: row.id, in: conversation, author: channel.contact.name, tx, &after)
                    continue
                }
                let isChange: Bool = if case .control = message.content { true } else { false }
                after.events.append(.newMessage(conversation: conversation, id: row.id,
                                                preview: message.content.displayText(direction: .incoming, peer: channel.contact.name),
                                                author: isChange ? nil : channel.contact.name))
            }
        }
    }

    /// An action whose message is not here (yet) waits for it, bounded (`ActionWaiting`):
    /// what waited 72 hours goes, and past 1,000 waiting in the conversation it is dropped.
    private func mayWait(_ content: MessageContent, in conversation: ConversationID, from contact: Contact,
                         _ tx: StoreTransaction) throws -> Bool {
        guard let target = content.actionTarget, try tx.message(conversation: conversation, id: target) == nil else { return true }
        let waiting = try tx.sweepWaitingActions(conversation: conversation, storedBefore: now - ActionWaiting.window)
        guard waiting < ActionWaiting.perConversation else {
            log("\(content.itemWords) from \(contact.name) dropped: \(waiting) wait already for their message")
            return false
        }
        return true
    }

    /// An action (a reaction) stored: it changes what its message shows, so the view reads
    /// it again; it is no message of its own, and alerts only as a reaction to this side's own
    /// message (not one taken back), unless `alert-reactions off` (`AlertCenter.kind` says
    /// the same). `author`: in a group, who wrote it.
    private func actionStored(_ content: MessageContent, id: MessageID, in conversation: ConversationID, author: String?,
                              _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        if !after.events.contains(.rowAdded(conversation: conversation)) { after.events.append(.rowAdded(conversation: conversation)) }
        guard case .control(.reaction(_, let emoji?, _)) = content, try AlertCenter.reactionAlerts(content, in: conversation, tx) else { return }
        after.events.append(.newMessage(conversation: conversation, id: id, preview: "Reacted \(emoji)", author: author, reaction: emoji))
    }

    static func receiptIDs(_ body: [UInt8]) -> [MessageID] {
        var r = ByteReader(body)
        guard let n = try? r.u16() else { return [] }
        var ids: [MessageID] = []
        ids.reserveCapacity(Int(n))
        for _ in 0..<n {
            guard let bytes = try? r.slice(MessageID.byteCount), let id = MessageID(bytes: bytes) else { return [] }
            ids.append(id)
        }
        return r.isAtEnd ? ids : []
    }

    /// A message request to our invite token (`RequestArrival` decides): from a contact we
    /// know, it is simply their message; from anyone else it creates a contact in state
    /// `request`. From a contact the user blocked or deleted it is dropped (their code,
    /// entered again, brings them back). A stranger whose code uses the name of a contact we
    /// have (Sam reinstalled without his export, or someone posing as Sam) stays a request of
    /// its own, and that contact's conversation gets a row saying so, once per requester.
    private func receiveRequest(_ payload: [UInt8], _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        guard let (request, code) = MessageRequest.open(payload, account: identity.accountKey) else {
            return rejectForged("a message request that does not verify")
        }
        var contact = try tx.contact(accountKey: code.accountKey)
        if contact?.kind == .member {
            // A member met through a group raises no request: it writes in the group.
            return log("dropped a message request from \(contact!.name), who is only a member of a group here")
        }
        var namesake: Contact?
        if contact == nil, let named = try tx.contact(named: code.name), !named.isDeleted, named.state != .request {
            namesake = named
        }
        let kind = SystemRowKind.namesakeRequest(code.accountKey)
        let told = try namesake.map { try tx.systemRowPosition(contact: $0.id, kind: kind, since: 0) != nil }
        let isControl = if case .control = request.content { true } else { false }
        let arrival = RequestArrival.of(contact.map { .known(isRequest: $0.state == .request, gone: $0.isBlocked || $0.isDeleted) } ?? .stranger,
                                        isControl: isControl, namesake: told.map { .contact(told: $0) } ?? .none)
        switch arrival {
        case .dropped:
            guard let known = contact else { return }
            return log("dropped a message request from \(known.isBlocked ? "blocked" : "deleted") \(known.name)")
        case .ignored:
            return
        case .message:
            // A contact sends requests only while it holds no session with us: it started over.
            // A receipt sent in the session we hold would never be read, and receipts are not
            // recovered: they wait for a session it holds.
            if let known = contact, let channel = channels[known.id], channel.saved != nil {
                channel.saved!.peerHoldsNone()
            }
        case .newRequest(let rowForNamesake):
            let candidates = RequestNames.candidates(for: code.name, fingerprint: Hash.blake2b(code.accountKey, outputBytes: 16))
            var name = candidates.last!
            for candidate in candidates where try tx.contact(named: candidate) == nil { name = candidate; break }
            let added = try tx.addContact(NewContact(name: name, accountKey: code.accountKey, deviceKey: code.deviceKey,
                                                     deviceCertificate: code.deviceCertificate, relayAddress: code.relay.description,
                                                     inviteToken: code.inviteToken, state: .request), at: now)
            contact = try tx.contact(id: added.id)
            after.events.append(.conversationsChanged)
            if rowForNamesake, let namesake {
                log("a message request uses the name of \(namesake.name) with other keys: kept apart as a request")
                _ = try tx.addSystemRow(contact: namesake.id, kind: kind, text: RequestNames.namesakeRow(used: code.name, contact: namesake.name),
                                        action: nil, messageIDs: [], at: now)
                after.events.append(.rowAdded(conversation: namesake.id.conversation))
            }
        }
        guard let contact else { return }
        if case .control(.timerChanged(_, let counter)) = request.content,
           !TimerPolicy.isBelievable(counter, after: try tx.conversationTimer(contact: contact.id).setBy) {
            return rejectForged("a timer change in a message request whose counter is far past every one seen")
        }
        // What a message in a session must be, a request must be too: a quote or an action
        // of this conversation only, an action waiting within its bound.
        if let target = request.content.refersTo, try tx.messageElsewhere(id: target, than: contact.id.conversation, sharedWith: contact.id) {
            return rejectForged("\(request.content.itemWords) in a message request to a message of another conversation")
        }
        guard try mayWait(request.content, in: contact.id.conversation, from: contact, tx) else { return }
        guard try tx.insertIncoming(contact: contact.id, id: request.messageID, content: request.content, at: now,
                                    sentAt: request.createdAt, seq: nil) != nil else { return }
        if case .control(.timerChanged(let timer, let counter)) = request.content,
           try tx.applyTimer(timer, setBy: TimerPolicy.Change(counter: counter, id: request.messageID), contact: contact.id) {
            after.events.append(.conversationsChanged)
        }
        channels[contact.id]?.storedThisRun.invalidate()  // stored outside storeIncoming
        after.receiptsOwed += 1
        guard try itemStored(request.content, id: request.messageID, in: contact.id.conversation, from: contact.id, tx, &after) else {
            return try actionStored(request.content, id: request.messageID, in: contact.id.conversation, author: nil, tx, &after)
        }
        after.events.append(.newMessage(conversation: contact.id.conversation, id: request.messageID,
                                        preview: request.content.displayText(direction: .incoming)))
    }
}
