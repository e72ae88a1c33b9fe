import RChatCore

/// The running state of one handshake (Noise's "symmetric state"): the transcript hash `h`
/// over everything sent so far, and the chaining key `ck` into which every DH is mixed.
/// A value type: a copy is an independent fork, which lets `Initiator.finish` be retried.
struct HandshakeTranscript {
    static let protocolName = "rchat handshake v4: IK, X25519, XChaCha20-Poly1305, BLAKE2b"

    private(set) var hash: [UInt8]
    private var chainingKey: SecretBytes
    /// The key for the next payload; set by each DH.
    private var messageKey: SecretBytes?

    init(prologue: [UInt8], responderAccountKey: [UInt8]) {
        hash = Hash.blake2b(Array(Self.protocolName.utf8))
        var start = hash
        chainingKey = SecretBytes(consuming: &start)
        mix(prologue)
        // IK's pre-message: the responder's static key is known in advance; the initiator's
        // travels sealed in the first message.
        mix(responderAccountKey)
    }

    /// h = BLAKE2b(h ‖ len ‖ data): binds `data` into everything that follows.
    mutating func mix(_ data: [UInt8]) {
        var m = ByteWriter(capacity: hash.count + 4 + data.count)
        m.raw(hash)
        m.long(data)
        hash = Hash.blake2b(m.bytes)
    }

    /// Mixes a DH result into the chaining key and derives the next payload key from it.
    mutating func mix(secret dh: SecretBytes) {
        let next = Hash.deriveKey(from: chainingKey, context: "rchat handshake v4 chaining key", secret: dh)
        messageKey = Hash.deriveKey(from: chainingKey, context: "rchat handshake v4 message key", secret: dh)
        chainingKey = next
    }

    /// Encrypts a payload under the current message key with the transcript as associated
    /// data, then mixes the ciphertext in. Each message key seals exactly one payload (the
    /// initiator's static key and its payload are sealed under keys of two different DHs).
    mutating func seal(_ payload: [UInt8], messageNumber: UInt8) -> [UInt8] {
        guard let key = messageKey else { preconditionFailure("seal before any DH") }
        let sealed = AEAD.seal(payload, additionalData: hash, nonce: AEAD.counterNonce(0, direction: messageNumber), key: key)
        messageKey = nil
        mix(sealed)
        return sealed
    }

    mutating func open(_ sealed: [UInt8], messageNumber: UInt8) throws(HandshakeError) -> [UInt8] {
        guard let key = messageKey else { preconditionFailure("open before any DH") }
        let payload: [UInt8]
        do { payload = try AEAD.open(sealed, additionalData: hash, nonce: AEAD.counterNonce(0, direction: messageNumber), key: key) }
        catch { throw .decryptionFailed }
        messageKey = nil
        mix(sealed)
        return payload
    }

    /// The session's keys once both messages are through.
    func split(role: Handshake.Role) -> SessionKeys {
        let toResponder = Hash.deriveKey(from: chainingKey, context: "rchat session key v4 initiator to responder", hash)
        let toInitiator = Hash.deriveKey(from: chainingKey, context: "rchat session key v4 responder to initiator", hash)
        var m = ByteWriter(capacity: 64)
        m.long(Array("rchat session id v4".utf8))
        m.raw(hash)
        let id = Hash.blake2b(m.bytes, outputBytes: SessionKeys.sessionIDBytes)
        switch role {
        case .initiator: return SessionKeys(sessionID: id, role: role, sendKey: toResponder, receiveKey: toInitiator)
        case .responder: return SessionKeys(sessionID: id, role: role, sendKey: toInitiator, receiveKey: toResponder)
        }
    }
}
