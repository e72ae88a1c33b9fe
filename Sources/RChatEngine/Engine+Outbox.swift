import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatWire
import RChatStore

/// The engine as the outbox component sees it (`OutboxContext`).
extension Engine: OutboxContext {
    func storeSession(of channel: PairwiseChannel) throws(EngineError) {
        try AccountService.wrap { try store.transaction { tx in try persist(channel, tx) } }
    }

    var sendsMessages: Bool { policy.sends }

    var acknowledgementSeconds: Double { Double(settings.acknowledgementTimeoutSeconds) }

    func connectedRelay(_ address: RelayAddress) -> (any RelayLink)? { connections[address]?.client }

    var ownContactCode: String { identity.contactCode(device: account.device).text }

    func sendRequest(_ request: MessageRequest, to contact: Contact, token: InviteToken, at address: RelayAddress,
                     as completion: RelayCompletion) -> Bool {
        guard let connection = connections[address], let client = connection.client,
              let payload = try? request.sealed(from: identity.accountKey, to: contact.accountKey),
              let sequence = try? client.sendRequest(to: token, payload, flush: false) else { return false }
        connection.requests.register(sequence, completion)
        return true
    }

    func sendAttachment(_ item: OutboxItem, _ channel: PairwiseChannel, _ saved: inout SavedSessionState,
                        client: any RelayLink, deadline: Double, chunks: inout Int?) throws(EngineError) -> Bool {
        try transfers.sendAttachment(item, channel, &saved, client: client, deadline: deadline, chunks: &chunks, context: self)
    }

    func noteUploadWaits(_ channel: PairwiseChannel, _ files: [MessageRowID]) {
        transfers.noteUploadWaits(channel, files, context: self)
    }

    /// Sends what the outbox holds for the channel's contact (`Outbox.flush`).
    @discardableResult
    func flushOutbox(_ channel: PairwiseChannel, ignoringBackoff: Bool = false, inSlot: Bool = false) throws(EngineError) -> Bool {
        try outbox.flush(channel, ignoringBackoff: ignoringBackoff, inSlot: inSlot, context: self)
    }
}

extension Engine {
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
