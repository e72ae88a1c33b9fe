import Foundation
import RChatCore
import RChatCrypto
import RChatRelayClient
import RChatStore

/// An envelope opened on the relay reader thread it arrived on.
struct OpenedEnvelope: @unchecked Sendable {
    let contact: ContactID
    /// The conversation secret and session key that opened it, compared by identity with
    /// the ones the engine holds when it takes the envelope.
    let secretKey: SecretBytes
    let sessionKey: SecretBytes
    let header: EnvelopeHeader
    let body: [UInt8]
    /// A message's text, already checked to be UTF-8.
    let text: String?
}

/// What the engine lets relay reader threads know so they can open envelopes before the
/// engine thread sees them: per rendezvous code, the conversation's secret and the receive
/// keys it holds. The engine thread stores, and is the bottleneck of a backlog; the reader
/// threads have time to spare.
///
/// A copy may be stale. The engine uses an opening only when that conversation still holds
/// the same secret and session key; otherwise it opens the envelope itself, as it always
/// could. A stale copy costs time, never a wrong result.
final class EnvelopeKeyring: @unchecked Sendable {
    struct Entry {
        let contact: ContactID
        let secret: ConversationSecret
        let keys: [ReceiveKey]
    }

    private let lock = NSLock()
    private var entries: [HashedBytes: Entry] = [:]
    private var conversations: [Entry] = []
    /// Codes of earlier runs (a backlog held under them) and the conversation whose secret
    /// opened one of their envelopes: tried first next time.
    private var learned: [HashedBytes: Entry] = [:]

    /// Replaces what readers see (engine thread).
    func publish(_ entries: [HashedBytes: Entry]) {
        var seen: Set<ContactID> = []
        let conversations = entries.values.filter { seen.insert($0.contact).inserted }
        lock.withLock {
            self.entries = entries
            self.conversations = conversations
            learned.removeAll()
        }
    }

    /// Opens `delivery` if it is an envelope of a conversation published here (any thread).
    func open(_ delivery: Delivery) -> OpenedEnvelope? {
        guard case .link(let code, _) = delivery.origin, case .envelope(let bytes)? = LinkFrame(delivery.payload) else { return nil }
        let key = HashedBytes(code)
        let (known, all) = lock.withLock { (entries[key] ?? learned[key], conversations) }
        // A code this run did not present: whichever conversation's header key opens it.
        let candidates = known.map { [$0] } ?? all
        for entry in candidates {
            guard let header = try? Envelope.openHeader(bytes, conversation: entry.secret) else { continue }
            if known == nil { lock.withLock { learned[key] = entry } }
            guard let sessionKey = entry.keys.first(where: { $0.sessionID == header.sessionID }),
                  let body = try? Envelope.openBody(bytes, header: header, key: sessionKey) else { return nil }
            let text = header.kind == .message ? String(validating: body, as: UTF8.self) : nil
            return OpenedEnvelope(contact: entry.contact, secretKey: entry.secret.key, sessionKey: sessionKey.key,
                                  header: header, body: body, text: text)
        }
        return nil
    }
}
