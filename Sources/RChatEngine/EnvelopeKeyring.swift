import Foundation
import RChatCore
import RChatCrypto
import RChatWire
import RChatStore
import Synchronization

/// An envelope opened on the relay reader thread it arrived on (a class: it is handed
/// along, never changed).
final class OpenedEnvelope: Sendable {
    let contact: ContactID
    /// The conversation secret and session key that opened it, compared by identity with
    /// the ones the engine holds when it takes the envelope.
    let secretKey: SecretBytes
    let sessionKey: SecretBytes
    let header: EnvelopeHeader
    /// A message's body is its content's encoding, stored as it is.
    let body: [UInt8]
    /// A message's content, decoded here; nil when it does not decode (the engine says why).
    let content: MessageContent?

    init(contact: ContactID, secretKey: SecretBytes, sessionKey: SecretBytes, header: EnvelopeHeader, body: [UInt8],
         content: MessageContent?) {
        self.contact = contact
        self.secretKey = secretKey
        self.sessionKey = sessionKey
        self.header = header
        self.body = body
        self.content = content
    }
}

/// What the engine lets relay reader threads know so they can open envelopes before the
/// engine thread sees them: per rendezvous code, the conversation's secret and the receive
/// keys it holds. The engine thread stores, and is the bottleneck of a backlog; the reader
/// threads have time to spare.
///
/// A copy may be stale. The engine uses an opening only when that conversation still holds
/// the same secret and session key; otherwise it opens the envelope itself, as it always
/// could. A stale copy costs time, never a wrong result.
final class EnvelopeKeyring: Sendable {
    struct Entry: Sendable {
        let contact: ContactID
        let secret: ConversationSecret
        /// Keys of sessions from before the ratchet.
        let keys: [ReceiveKey]
        /// The keys ahead in the ratchet of the session that last received (`Ratchet.lookahead`).
        var ahead: Ahead? = nil
    }

    struct Ahead: Sendable {
        let sessionID: [UInt8]
        let senderRole: Handshake.Role
        let keys: Ratchet.Lookahead

        /// The key for an envelope with `header`, if it is among these.
        func key(for header: EnvelopeHeader) -> SecretBytes? {
            guard let ratchet = header.ratchet, header.sessionID == sessionID, ratchet.publicKey == keys.publicKey,
                  ratchet.number >= keys.first, Int(ratchet.number - keys.first) < keys.keys.count else { return nil }
            return keys.keys[Int(ratchet.number - keys.first)]
        }
    }

    private struct Published {
        var byContact: [ContactID: Entry] = [:]
        var conversations: [Entry] = []
        /// The codes this run presented, and codes of earlier runs (a backlog held under them)
        /// whose envelopes a conversation's header key opened: that conversation is tried first.
        var codes: [HashedBytes: ContactID] = [:]
    }
    private let published = Mutex(Published())

    /// Replaces what readers see (engine thread): every conversation's secret and receive
    /// keys (published before any code, so a backlog that arrives with the connection finds
    /// them), and the codes presented. What readers learned of earlier codes is kept.
    func publish(_ conversations: [Entry], codes presented: [HashedBytes: ContactID]) {
        let byContact = Dictionary(conversations.map { ($0.contact, $0) }, uniquingKeysWith: { first, _ in first })
        published.withLock {
            $0.byContact = byContact
            $0.conversations = conversations
            $0.codes.merge(presented) { _, new in new }
        }
    }

    /// Opens `delivery` if it is an envelope of a conversation published here (any thread).
    func open(_ delivery: Delivery) -> OpenedEnvelope? {
        guard case .link(let code) = delivery.origin, let bytes = LinkFrame.envelopeBytes(in: delivery.payloadBytes) else { return nil }
        let key = HashedBytes(code)
        let (known, all) = published.withLock { state in (state.codes[key].flatMap { state.byContact[$0] }, state.conversations) }
        // A code not presented in this run: whichever conversation's header key opens it.
        let candidates = known.map { [$0] } ?? all
        for entry in candidates {
            guard let header = try? Envelope.openHeader(bytes, conversation: entry.secret) else { continue }
            if known == nil { published.withLock { $0.codes[key] = entry.contact } }
            let key: SecretBytes, senderRole: Handshake.Role
            if header.ratchet != nil {
                guard let ahead = entry.ahead, let found = ahead.key(for: header) else { return nil }
                (key, senderRole) = (found, ahead.senderRole)
            } else {
                guard let sessionKey = entry.keys.first(where: { $0.sessionID == header.sessionID }) else { return nil }
                (key, senderRole) = (sessionKey.key, sessionKey.senderRole)
            }
            guard let body = try? Envelope.openBody(bytes[...], header: header, key: key, senderRole: senderRole) else { return nil }
            // Decoded here, where there is time to spare: the engine thread only stores it.
            let content = header.kind == .message ? try? MessageContent(decoding: body) : nil
            return OpenedEnvelope(contact: entry.contact, secretKey: entry.secret.key, sessionKey: key,
                                  header: header, body: body, content: content)
        }
        return nil
    }
}
