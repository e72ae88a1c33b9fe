import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatStore

/// What the recovery component reaches of the rest of the engine, and nothing else. The
/// component is handed it with every call and holds none of it, as a swift-nio handler is
/// handed its `ChannelHandlerContext`: `Engine` is one (`Engine+Recovery.swift`), a test's
/// stand-in another.
protocol RecoveryContext: ComponentContext {
    /// This device's key: it signs the notices this side sends.
    var noticeSigningKey: SigningKey { get }
    /// A notice that does not hold (forged, for another session, read already): counted and
    /// logged, nothing else.
    func rejectForged(_ what: String)
}

/// Recovery (README, "When a contact loses their state"; docs/PROTOCOL.md): the side
/// that lost its state tells the other, in a notice signed with its device key, which
/// message ids it could not read; the other side resends by itself only where the policy
/// allows, and otherwise marks them Not delivered with a Resend action.
///
/// It keeps no state of its own: what it knows is per channel — the started-over flags
/// (`PairwiseChannel.recovery`, stored) and the notice in flight (`SessionTraffic`) — and
/// the rest it reaches through a `RecoveryContext`.
enum Recovery {
    /// A session began with `channel` (its handshake completed): what the handshake showed of
    /// who lost state, stored with the contact. `hadState`: this side knew the conversation.
    static func sessionBegan(_ channel: PairwiseChannel, hadState: Bool, peerStartedOver: Bool, _ tx: StoreTransaction) throws {
        // Kept until the contact's notice arrives, across sessions and restarts: the session
        // that showed it may end before the notice can go (a notice waits for a session the
        // reader holds).
        if hadState && peerStartedOver { channel.recovery.peerStartedOver = true }
        // This side started over: its notice (maybe empty) is owed until the relay takes one.
        if !hadState { channel.recovery.startedOverNoticeOwed = true }
        try tx.setRecoveryFlags(contact: channel.contact.id, channel.recovery)
    }

    /// Once the contact holds the session, and whenever more held messages turned out
    /// unreadable: tell the contact which ids this side could not read. A side that started
    /// over always sends one (maybe empty), so the contact knows there is nothing more to
    /// wait for.
    ///
    /// Only in a session the contact is known to hold (`SavedSessionState.peerHoldsCurrent`):
    /// a notice sealed in a session whose handshake the contact never completed could never
    /// be read, and nothing would ever tell this side so.
    static func sendNoticeIfNeeded(_ channel: PairwiseChannel, context: some RecoveryContext) throws(EngineError) {
        let startedOver = channel.recovery.startedOverNoticeOwed && !channel.traffic.startedOverNoticeInFlight
        guard channel.carries(.notice), var saved = channel.saved, saved.peerHoldsCurrent, saved.canSeal,
              let session = saved.current?.id else { return }
        let pending = try AccountService.wrap { try context.store.undecryptable(contact: channel.contact.id, notified: false) }
            .map(\.id).filter { !channel.traffic.noticeInFlight.contains($0) }
        guard startedOver || !pending.isEmpty else { return }
        var rest = pending[...]
        repeat {
            let chunk = Array(rest.prefix(CouldNotReadNotice.maxMessageIDs))
            rest = rest.dropFirst(chunk.count)
            let notice = CouldNotReadNotice(messageIDs: chunk, conversation: channel.secret, session: session, time: context.now)
                .signed(by: context.noticeSigningKey)
            guard let envelope = saved.seal(kind: .notice, messageID: .fresh(context.clock), body: notice, conversation: channel.secret)
            else { return }
            do {
                _ = try context.sendOnLink(channel, .envelope(envelope), as: .notice(channel.contact.id, chunk), flush: true)
            } catch {
                break
            }
            channel.traffic.noticeInFlight.formUnion(chunk)
            if startedOver { channel.traffic.startedOverNoticeInFlight = true }
        } while !rest.isEmpty
        channel.saved = saved
    }

    /// The relay took our notice: the contact has been told, and this side says so.
    static func noticeTaken(_ ids: [MessageID], on channel: PairwiseChannel, _ tx: StoreTransaction, _ events: inout [ChatEvent],
                            context: some RecoveryContext) throws {
        let contactID = channel.contact.id
        channel.traffic.noticeInFlight.subtract(ids)
        if channel.traffic.startedOverNoticeInFlight {
            channel.traffic.startedOverNoticeInFlight = false
            channel.recovery.startedOverNoticeOwed = false
            try tx.setRecoveryFlags(contact: contactID, channel.recovery)
        }
        guard !ids.isEmpty else { return }
        try tx.markUndecryptableNotified(contact: contactID, ids: ids)
        // Someone known only through a group has no conversation of their own for the row
        // (what could not be read says nothing of where it belonged).
        guard channel.contact.kind == .contact else { return }
        let name = channel.contact.name
        _ = try tx.addSystemRow(contact: contactID, kind: .couldNotDecrypt,
                                text: RecoveryRows.couldNotDecrypt(name: name, count: ids.count), action: nil, messageIDs: ids, at: context.now)
        events.append(.rowAdded(conversation: contactID.conversation))
    }

    /// The relay refused our notice: nothing of it is in flight; it goes again with the next
    /// chance to send one (`sendNoticeIfNeeded`, after each batch).
    static func noticeRefused(_ ids: [MessageID], on channel: PairwiseChannel) {
        channel.traffic.noticeInFlight.subtract(ids)
        channel.traffic.startedOverNoticeInFlight = false
    }

    /// A could-not-read notice from the contact, inside a session made with their pinned
    /// account key. Only a notice signed by their pinned device key can resend anything
    /// automatically; one signed by the session's (certified, unpinned) device key leads to
    /// Not delivered; one signed by anything else changes nothing.
    ///
    /// The notice must name the session whose keys sealed the envelope it came in (`sealedIn`),
    /// which may be one this side has since left: a notice the relay held across a reconnect
    /// still counts. Each notice counts once (`markNoticeRead`): the relay delivering it again,
    /// in any session, gets a log line and nothing else.
    static func receiveNotice(_ body: [UInt8], in channel: PairwiseChannel, sealedIn session: [UInt8], _ tx: StoreTransaction,
                              _ after: inout Engine.AfterCommit, context: some RecoveryContext) throws {
        let contact = channel.contact
        func open(signedBy key: [UInt8]) throws(CouldNotReadNoticeError) -> CouldNotReadNotice {
            try CouldNotReadNotice.open(body, conversation: channel.secret, session: session, signedBy: key)
        }
        var signers: [(ResendPolicy.NoticeSigner, [UInt8])] = [(.pinnedDevice, contact.deviceKey)]
        // The device that made the session it came in: the link's, or, when the notice comes
        // while there is none (held by the relay for this side, handed over at once on a
        // reconnect), the one that session was made with in this run, else (the engine
        // restarted since) any unpinned device of theirs a handshake proved since their keys
        // last changed, as its row recorded.
        var unpinned = [channel.peer?.deviceKey, channel.sessionDevices[session]].compactMap { $0 }
        unpinned += try tx.newDeviceKeys(contact: contact.id, since: contact.keysChangedAt)
        for key in unpinned where key != contact.deviceKey && !signers.contains(where: { $0.1 == key }) {
            signers.append((.unpinnedDevice, key))
        }
        var opened: (CouldNotReadNotice, ResendPolicy.NoticeSigner)?
        for (signer, key) in signers where opened == nil {
            do {
                opened = (try open(signedBy: key), signer)
            } catch .otherSession {
                return context.rejectForged("a could-not-read notice from \(contact.name) written for another session than it came in")
            } catch {
                continue
            }
        }
        guard let (notice, signer) = opened else {
            return context.rejectForged("a could-not-read notice from \(contact.name) not signed by their device key")
        }
        guard try tx.markNoticeRead(contact: contact.id, digest: Hash.blake2b(body), at: context.now) else {
            return context.rejectForged("a could-not-read notice from \(contact.name) read already")
        }
        let t = context.now
        let fingerprint = AccountService.keysFingerprint(contact)
        // Each id names a message of this side's that went to them: in their direct
        // conversation or in a group (their delivery of it is what is decided).
        var sent: [(message: StoredMessage, delivery: StoredDelivery)] = [], logs: [StoredMessage] = []
        for id in notice.messageIDs {
            guard let m = try tx.message(to: contact.id, id: id),
                  let d = try tx.deliveries(message: m.rowID).first(where: { $0.member == contact.id }) else { continue }
            if case .control(.groupChanges) = m.content {
                // A group's log as it was goes again, as it is, only to a member still in the
                // group here — its changes are all still true (they take what they lack, the
                // rest as replays) — and always, as no one else would hand them the changes
                // in it while it is on its way (`hand`); to anyone else an old one would give
                // a group as it no longer is (someone who started over and is still in it gets
                // it as it is now, `Groups.handOn`). Not a message the user wrote: no row.
                if try stillInGroup(contact.id, m.conversation, tx) { logs.append(m) }
                continue
            }
            sent.append((m, d))
        }
        for m in logs {
            guard let change = try tx.queueResend(conversation: m.conversation, member: contact.id, id: m.id, automatically: false, at: context.now),
                  change.current == .sending else { continue }
            channel.traffic.sent.remove(change.message)
            after.resend(on: channel)
        }
        if sent.isEmpty {
            if channel.recovery.peerStartedOver { try startedOverRow(channel, tx, &after, context: context) }
            return
        }
        if channel.recovery.peerStartedOver {
            // Its notice arrived: what it could not read is handled below.
            channel.recovery.peerStartedOver = false
            try tx.setRecoveryFlags(contact: contact.id, channel.recovery)
        }
        let facts = try sent.map { m, d in
            ResendPolicy.Facts(signer: signer, keysUnchangedSinceSent: d.keysFingerprint == fingerprint,
                               sentAt: try relayTookAt(m, d, tx), status: d.status, autoResentBefore: d.autoResentAt != nil)
        }
        let lastDay = try tx.autoResentCount(contact: contact.id, since: t - ResendPolicy.day)
        let decisions = ResendPolicy.decide(facts, now: t, autoResentInLastDay: lastDay)
        // Per conversation (theirs, and each group the messages were in): its rows name them.
        var resent: [ConversationID: [MessageID]] = [:], notDelivered: [ConversationID: [MessageID]] = [:]
        var offer: [ConversationID: Bool] = [:], order: [ConversationID] = []
        for ((m, _), decision) in zip(sent, decisions) {
            let conversation = m.conversation
            if !order.contains(conversation) { order.append(conversation) }
            switch decision {
            case .resendAutomatically:
                if let change = try tx.queueResend(conversation: conversation, member: contact.id, id: m.id, automatically: true, at: t),
                   change.current == .sending {
                    resent[conversation, default: []].append(m.id)
                    channel.traffic.sent.remove(change.message)
                    after.events.append(.statusChanged(conversation: conversation, id: m.id, status: try shown(change, in: conversation, tx)))
                }
            case .notDelivered(let offerResend):
                if let change = try tx.raiseDelivery(conversation: conversation, member: contact.id, id: m.id, event: .peerCouldNotRead, at: t) {
                    _ = try tx.removeFromOutbox(change.delivery)
                    channel.acknowledged(change.message)
                    if change.current == .notDelivered {
                        notDelivered[conversation, default: []].append(m.id)
                        offer[conversation] = (offer[conversation] ?? true) && offerResend
                        after.events.append(.statusChanged(conversation: conversation, id: m.id, status: try shown(change, in: conversation, tx)))
                    }
                }
            case .keep:
                break
            }
        }
        for conversation in order {
            if let ids = resent[conversation] {
                _ = try tx.addSystemRow(conversation: conversation, member: contact.id, kind: .resentAutomatically,
                                        text: RecoveryRows.resentAutomatically(name: contact.name, count: ids.count),
                                        action: nil, messageIDs: ids, at: t)
                after.events.append(.rowAdded(conversation: conversation))
            }
            if let ids = notDelivered[conversation] {
                _ = try tx.addSystemRow(conversation: conversation, member: contact.id, kind: .couldNotBeRead,
                                        text: RecoveryRows.couldNotBeRead(name: contact.name, count: ids.count),
                                        action: offer[conversation] == true ? .resend : nil, messageIDs: ids, at: t)
                after.events.append(.rowAdded(conversation: conversation))
            }
        }
        if !resent.isEmpty { after.resend(on: channel) }
        context.log("\(contact.name) could not read \(sent.count) message(s): \(resent.values.map(\.count).reduce(0, +)) resent automatically, \(notDelivered.values.map(\.count).reduce(0, +)) not delivered")
    }

    /// What a message shows after a change of one delivery: in a direct conversation that
    /// delivery's status, in a group the summary over its current members.
    private static func shown(_ change: StatusChange, in conversation: ConversationID, _ tx: StoreTransaction) throws -> MessageStatus {
        conversation.isGroup ? try tx.deliverySummary(message: change.message).shown ?? change.current : change.current
    }

    /// Whether `contact` is a current member of the group `conversation` is, as this side,
    /// still in it, holds the group (false for a direct conversation).
    static func stillInGroup(_ contact: ContactID, _ conversation: ConversationID, _ tx: StoreTransaction) throws -> Bool {
        guard conversation.isGroup, try tx.group(conversation)?.state == .current else { return false }
        return try tx.currentMembers(conversation).contains(contact)
    }

    /// When the relay took an outgoing message (its first Sent), from which the 72 hours of
    /// automatic resend count; when it never said so, when it was written.
    static func relayTookAt(_ m: StoredMessage, _ d: StoredDelivery, _ tx: StoreTransaction) throws -> Int64 {
        try tx.statusLog(d.key).first { $0.status == .sent }?.at ?? m.createdAt
    }

    /// The contact started over and told us of nothing we could resend: our recent messages
    /// that left this device (Sent, or Not confirmed) before the new session, without a
    /// receipt, may not have reached them. They keep their status; Resend is offered. One
    /// still Sending never left, and one sent in the new session can be read there: neither
    /// is counted.
    static func startedOverRow(_ channel: PairwiseChannel, _ tx: StoreTransaction, _ after: inout Engine.AfterCommit,
                               context: some RecoveryContext) throws {
        channel.recovery.peerStartedOver = false
        let contact = channel.contact
        try tx.setRecoveryFlags(contact: contact.id, channel.recovery)
        let t = context.now
        // Written any time (one may wait in the outbox for days), taken by the relay within the
        // window and before the session the contact started over in; in their conversation
        // and in each group, a row there naming them.
        let newSession = channel.saved?.current?.startedAt ?? t
        var recent: [ConversationID: [MessageID]] = [:], order: [ConversationID] = []
        for (m, d) in try tx.outgoingDeliveries(to: contact.id) where d.status == .sent || d.status == .notConfirmed {
            let took = try relayTookAt(m, d, tx)
            guard took >= t - ResendPolicy.window && took < newSession else { continue }
            if recent[m.conversation] == nil { order.append(m.conversation) }
            recent[m.conversation, default: []].append(m.id)
        }
        for conversation in order {
            let ids = recent[conversation]!
            _ = try tx.addSystemRow(conversation: conversation, member: contact.id, kind: .startedOver,
                                    text: RecoveryRows.startedOver(name: contact.name, count: ids.count),
                                    action: .resend, messageIDs: ids, at: t)
            after.events.append(.rowAdded(conversation: conversation))
        }
    }
}
