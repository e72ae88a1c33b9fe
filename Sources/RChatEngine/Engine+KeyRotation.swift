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
              channel.carries(.keyAnnouncement), var saved = channel.saved, let keys = saved.sendKeys,
              let sequence = saved.takeSendSequence() else { return }
        let body = KeyRotation.announcement(
            newKey: identity.accountKey.publicKey, statement: previous.statement,
            certificate: DeviceCertificate.issue(deviceKey: account.device.publicKey, account: identity.accountKey))
        let envelope = Envelope.seal(kind: .keyRotation, messageID: .fresh(clock), sequence: sequence, body: body,
                                     keys: keys, conversation: channel.secret)
        channel.saved = saved
        do { try sendOnLink(channel, .envelope(envelope), as: .control(channel.contact.id, .envelope(envelope))) } catch { log("cannot announce the new key: \(error)") }
    }

    /// The contact rotated their account key: pin the new one (the old one vouched for it),
    /// say how many of our messages may not have arrived, offer Resend, resend nothing.
    func receiveKeyRotation(_ body: [UInt8], in channel: PairwiseChannel, _ tx: StoreTransaction,
                            _ after: inout AfterCommit) throws {
        let contact = channel.contact
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
        try tx.updatePinnedKeys(contact: contact.id, accountKey: key, deviceKey: contact.deviceKey, deviceCertificate: certificate, at: t)
        let recent = try tx.outgoingMessages(contact: contact.id, since: t - ResendPolicy.window).filter {
            $0.status == .sending || $0.status == .sent || $0.status == .notConfirmed
        }
        _ = try tx.addSystemRow(contact: contact.id, kind: .keysChanged,
                                text: RecoveryRows.keysChanged(name: contact.name, count: recent.count),
                                action: recent.isEmpty ? nil : .resend, messageIDs: recent.map(\.id), at: t)
        after.events.append(.rowAdded(conversation: contact.id.conversation))
        after.events.append(.conversationsChanged)
        log("\(contact.name) rotated their account key; the new key is pinned")
        if var saved = channel.saved, let keys = saved.sendKeys, let sequence = saved.takeSendSequence() {
            let envelope = Envelope.seal(kind: .keyRotationAccepted, messageID: .fresh(clock), sequence: sequence, body: [],
                                         keys: keys, conversation: channel.secret)
            channel.saved = saved
            after.replies.append((channel, .envelope(envelope)))
        }
        after.rebuild.append(contact.id)
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
