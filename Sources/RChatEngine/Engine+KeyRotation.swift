import Foundation
import RChatCore
import RChatCrypto
import RChatStore

extension Engine {
    /// The account key this side speaks to a contact with: the previous one until the
    /// contact has accepted a rotation.
    func myKey(for contact: Contact) -> SigningKey {
        if let previous = identity.previous, !contact.rotationAcknowledged { return previous.key }
        return identity.accountKey
    }

    /// After a session starts with a contact who has not accepted our new key: tell them.
    func announceRotationIfNeeded(_ channel: PairwiseChannel) throws(EngineError) {
        guard let previous = identity.previous, !channel.contact.rotationAcknowledged,
              channel.carries(.keyAnnouncement), var saved = channel.saved else { return }
        let body = KeyRotation.announcement(
            newKey: identity.accountKey.publicKey, statement: previous.statement,
            certificate: DeviceCertificate.issue(deviceKey: account.device.publicKey, account: identity.accountKey))
        guard let envelope = saved.seal(kind: .keyRotation, messageID: .fresh(clock), body: body, conversation: channel.secret) else { return }
        channel.saved = saved
        do { try sendOnLink(channel, .envelope(envelope), as: .control(channel.contact.id, .envelope(envelope))) } catch { log("cannot announce the new key: \(error)") }
    }

    /// The contact rotated their account key: pin the new one (the old one vouched for it),
    /// say how many of our messages may not have arrived, offer Resend, resend nothing.
    func receiveKeyRotation(_ body: [UInt8], in channel: PairwiseChannel, _ tx: StoreTransaction,
                            _ after: inout AfterCommit) throws {
        let contact = channel.contact
        // Taken already (our acceptance did not reach them): accepted again, nothing else.
        if let previous = contact.previousAccountKey, let (key, _) = KeyRotation.verify(body, pinned: previous, device: contact.deviceKey),
           constantTimeEqual(key, contact.accountKey) {
            return accept(in: channel, &after)
        }
        // Only the device we pinned may move the contact to a new account key: a copy of the
        // account keys on another machine (a thief's) must not take the contact over. (Pinned
        // now: a device verified during this session counts.)
        guard let peer = channel.peer, constantTimeEqual(peer.deviceKey, contact.deviceKey) else {
            return rejectForged("a key rotation from \(contact.name) in a session with a device key that is not pinned")
        }
        guard let (key, certificate) = KeyRotation.verify(body, pinned: contact.accountKey, device: contact.deviceKey) else {
            return rejectForged("a key rotation from \(contact.name) that does not verify")
        }
        let t = now
        try tx.updatePinnedKeys(contact: contact.id, accountKey: key, deviceKey: contact.deviceKey, deviceCertificate: certificate,
                                rotated: true, at: t)
        // In their conversation — or, for someone known only through groups, in each group
        // with them where some of ours may not have arrived (their rekey there says the
        // rest) — how many, with Resend.
        var conversations: [ConversationID] = []
        if contact.kind == .contact {
            conversations.append(contact.id.conversation)
        } else {
            for group in try tx.groups() where group.state == .current && !group.isBlocked {
                if try tx.currentMembers(group.conversation).contains(contact.id) { conversations.append(group.conversation) }
            }
        }
        for conversation in conversations {
            var recent: [MessageID] = []
            for m in try tx.outgoingMessages(conversation: conversation, since: t - ResendPolicy.window) {
                let status = conversation == contact.id.conversation ? m.status : try tx.deliveries(message: m.rowID).first { $0.member == contact.id }?.status
                if status == .sending || status == .sent || status == .notConfirmed { recent.append(m.id) }
            }
            if recent.isEmpty && conversation != contact.id.conversation { continue }
            _ = try tx.addSystemRow(conversation: conversation, member: contact.id, kind: .keysChanged,
                                    text: RecoveryRows.keysChanged(name: contact.name, count: recent.count),
                                    action: recent.isEmpty ? nil : .resend, messageIDs: recent, at: t)
            after.events.append(.rowAdded(conversation: conversation))
        }
        after.events.append(.conversationsChanged)
        log("\(contact.name) rotated their account key; the new key is pinned")
        accept(in: channel, &after)
        after.rebuild.append(contact.id)
    }

    /// Tells the contact their new key is pinned here (an `AfterCommit` reply).
    private func accept(in channel: PairwiseChannel, _ after: inout AfterCommit) {
        guard var saved = channel.saved,
              let envelope = saved.seal(kind: .keyRotationAccepted, messageID: .fresh(clock), body: [], conversation: channel.secret)
        else { return }
        channel.saved = saved
        after.replies.append((channel, .envelope(envelope)))
    }

    /// After `keys rotate` (here or by a command while this ran), and at each start: every
    /// group whose log still names this account by its previous key gets the rekey
    /// (`Groups.rekeyAll`); the outbox sends it.
    func rekeyGroups() throws(EngineError) {
        guard identity.previous != nil else { return }
        let (identity, t, clock) = (identity, now, clock)
        let rekeyed = try AccountService.wrap { try store.transaction { tx in try Groups.rekeyAll(as: identity, tx, at: t, clock: clock) } }
        if rekeyed > 0 { log("\(rekeyed) group(s) told of this account's new key") }
    }

    /// The contact accepted our new key: from now on we speak to them with it.
    func receiveRotationAccepted(in channel: PairwiseChannel, _ tx: StoreTransaction, _ after: inout AfterCommit) throws {
        guard identity.previous != nil, !channel.contact.rotationAcknowledged else { return }
        try tx.setRotationAcknowledged(contact: channel.contact.id, true)
        after.rebuild.append(channel.contact.id)
    }

    /// A conversation whose keys changed starts again from its store row: new secret, new
    /// codes, a new session; its saved state (counter, older receive keys) carries over.
    func rebuild(_ contactID: ContactID) throws(EngineError) {
        guard let old = channels[contactID] else { return }
        try retire([old])
        try reloadConversations()
    }
}
