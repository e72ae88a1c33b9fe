import RChatCore

extension Handshake {
    /// The side whose account key sorts first. Create it, send `firstMessage()`, and
    /// `finish` with the reply.
    public struct Initiator: Sendable {
        private let context: HandshakeContext
        private let ephemeral: AgreementKey
        private let transcript: HandshakeTranscript
        private let message: [UInt8]

        /// `reconnectCounter` is the saved counter, nil when this side has no saved state
        /// (it then says "started over"). `extensionBytes`: at most 65535 bytes.
        /// `prologue`: context both sides know (e.g. the link), bound into the transcript.
        public init(me: LocalIdentity, peer: PinnedKeys, reconnectCounter: UInt64?,
                    extensionBytes: [UInt8] = [], prologue: [UInt8] = []) throws(HandshakeError) {
            context = try HandshakeContext(me: me, peer: peer, role: .initiator,
                                           announcement: Announcement(reconnectCounter: reconnectCounter, extensionBytes: extensionBytes))
            let e = AgreementKey.generate()
            var t = context.startTranscript(prologue: prologue)
            let header = [Handshake.protocolVersion, 1]
            t.mix(header)
            t.mix(e.publicKey)
            try t.mix(secret: dh(e, context.peerStatic))                 // es
            let sealedStatic = t.seal(me.account.publicKey, messageNumber: 1)
            try t.mix(secret: dh(context.myStatic, context.peerStatic))  // ss
            let sealed = context.sealPayload(&t, messageNumber: 1)
            ephemeral = e
            transcript = t
            message = header + e.publicKey + sealedStatic + sealed
        }

        public func firstMessage() -> [UInt8] { message }

        /// Reads the responder's reply. Non-mutating: a failed reply leaves the initiator
        /// able to try another.
        public func finish(_ reply: [UInt8]) throws(HandshakeError) -> Session {
            let parts = try Handshake.parse(reply, messageNumber: 2)
            guard parts.sealedStatic.isEmpty else { throw .malformed }
            var t = transcript
            t.mix(parts.header)
            t.mix(parts.ephemeral)
            try t.mix(secret: dh(ephemeral, parts.ephemeral))             // ee
            try t.mix(secret: dh(context.myStatic, parts.ephemeral))      // se
            let peer = try context.openPayload(parts.sealed, &t, messageNumber: 2)
            let keys = t.split(role: .initiator)
            // The responder's ephemeral is its first ratchet key (checked by the DH above).
            guard let ratchet = try? Ratchet.initiator(sessionKeys: keys, responderKey: parts.ephemeral) else { throw .malformed }
            return context.session(keys: keys, ratchet: ratchet, peer: peer)
        }
    }

    /// The side whose account key sorts second: answers the initiator's first message.
    public struct Responder: Sendable {
        private let context: HandshakeContext
        private let prologue: [UInt8]

        public init(me: LocalIdentity, peer: PinnedKeys, reconnectCounter: UInt64?,
                    extensionBytes: [UInt8] = [], prologue: [UInt8] = []) throws(HandshakeError) {
            context = try HandshakeContext(me: me, peer: peer, role: .responder,
                                           announcement: Announcement(reconnectCounter: reconnectCounter, extensionBytes: extensionBytes))
            self.prologue = prologue
        }

        /// Checks the first message and answers it with a fresh ephemeral key. A first message
        /// that proves an account key other than the pinned one throws `.keysDontMatch` and
        /// gets no answer.
        public func respond(to firstMessage: [UInt8]) throws(HandshakeError) -> (reply: [UInt8], session: Session) {
            let parts = try Handshake.parse(firstMessage, messageNumber: 1)
            var t = context.startTranscript(prologue: prologue)
            t.mix(parts.header)
            t.mix(parts.ephemeral)
            try t.mix(secret: dh(context.myStatic, parts.ephemeral))      // es
            let presentedKey = try t.open(parts.sealedStatic, messageNumber: 1)
            guard let presentedStatic = Signature.agreementPublicKey(fromSigningKey: presentedKey) else { throw .malformed }
            try t.mix(secret: dh(context.myStatic, presentedStatic))      // ss
            let peer = try context.openPayload(parts.sealed, &t, messageNumber: 1, presentedAccountKey: presentedKey)

            let e = AgreementKey.generate()
            let header = [Handshake.protocolVersion, 2]
            t.mix(header)
            t.mix(e.publicKey)
            try t.mix(secret: dh(e, parts.ephemeral))                     // ee
            try t.mix(secret: dh(e, context.peerStatic))                  // se
            let sealed = context.sealPayload(&t, messageNumber: 2)
            let keys = t.split(role: .responder)
            return (header + e.publicKey + sealed,
                    context.session(keys: keys, ratchet: .responder(sessionKeys: keys, ephemeral: e), peer: peer))
        }
    }

    /// Splits a message into its clear header, ephemeral key, sealed static key (message 1
    /// only; empty in message 2) and sealed payload.
    static func parse(_ message: [UInt8], messageNumber: UInt8)
        throws(HandshakeError) -> (header: [UInt8], ephemeral: [UInt8], sealedStatic: [UInt8], sealed: [UInt8]) {
        guard message.count >= 1 else { throw .malformed }
        guard message[0] == protocolVersion else { throw .unsupportedVersion(message[0]) }
        let staticBytes = messageNumber == 1 ? sealedStaticBytes : 0
        guard message.count >= headerBytes + AgreementKey.keyBytes + staticBytes + AEAD.tagBytes + SigningKey.signatureBytes,
              message.count <= maxMessageBytes, message[1] == messageNumber
        else { throw .malformed }
        let keyEnd = headerBytes + AgreementKey.keyBytes
        let staticEnd = keyEnd + staticBytes
        return (Array(message[..<headerBytes]), Array(message[headerBytes..<keyEnd]),
                Array(message[keyEnd..<staticEnd]), Array(message[staticEnd...]))
    }
}

/// X25519 for the handshake; a low-order key from the wire is a malformed message.
private func dh(_ mine: AgreementKey, _ theirs: [UInt8]) throws(HandshakeError) -> SecretBytes {
    do { return try mine.sharedSecret(with: theirs) } catch { throw .malformed }
}

/// What both roles share: the keys in play and how payloads are built and checked.
struct HandshakeContext: Sendable {
    let me: Handshake.LocalIdentity
    let peer: Handshake.PinnedKeys
    let role: Handshake.Role
    let myStatic: AgreementKey
    let peerStatic: [UInt8]
    let announcement: Handshake.Announcement

    init(me: Handshake.LocalIdentity, peer: Handshake.PinnedKeys, role: Handshake.Role,
         announcement: Handshake.Announcement) throws(HandshakeError) {
        precondition(announcement.extensionBytes.count <= HandshakePayload.maxExtensionBytes, "handshake extension too long")
        guard me.account.publicKey != peer.accountKey,
              Handshake.Role.of(myAccountKey: me.account.publicKey, peerAccountKey: peer.accountKey) == role
        else { throw .wrongRole }
        guard let peerStatic = Signature.agreementPublicKey(fromSigningKey: peer.accountKey) else { throw .unusableKey }
        self.me = me
        self.peer = peer
        self.role = role
        self.myStatic = me.account.agreementKey()
        self.peerStatic = peerStatic
        self.announcement = announcement
    }

    func startTranscript(prologue: [UInt8]) -> HandshakeTranscript {
        HandshakeTranscript(prologue: prologue, responderAccountKey: role == .initiator ? peer.accountKey : me.account.publicKey)
    }

    func sealPayload(_ t: inout HandshakeTranscript, messageNumber: UInt8) -> [UInt8] {
        let payload = HandshakePayload(accountKey: me.account.publicKey, deviceKey: me.device.publicKey,
                                       deviceCertificate: me.deviceCertificate,
                                       startedOver: announcement.reconnectCounter == nil,
                                       reconnectCounter: announcement.reconnectCounter ?? 0,
                                       extensionBytes: announcement.extensionBytes)
        let body = payload.body()
        let signature = me.device.sign(HandshakePayload.signedMessage(role: role, transcript: t.hash, body: body))
        return t.seal(body + signature, messageNumber: messageNumber)
    }

    /// Decrypts and checks the peer's payload, in an order that gives the most useful error:
    /// shape, version, certificate, signature, and only then whether the account key proved
    /// is the pinned one. `presentedAccountKey`: the key sealed in message 1, which the payload
    /// must repeat (the responder's key in message 2 is the pinned one, or nothing opens).
    func openPayload(_ sealed: [UInt8], _ t: inout HandshakeTranscript, messageNumber: UInt8,
                     presentedAccountKey: [UInt8]? = nil) throws(HandshakeError) -> VerifiedPeer {
        let signedTranscript = t.hash
        let plaintext = try t.open(sealed, messageNumber: messageNumber)
        let (payload, body, signature) = try HandshakePayload.decode(plaintext)
        let provedKey = presentedAccountKey ?? peer.accountKey
        guard DeviceCertificate.verify(payload.deviceCertificate, deviceKey: payload.deviceKey, accountKey: payload.accountKey) else {
            throw .badCertificate
        }
        let signed = HandshakePayload.signedMessage(role: role.peer, transcript: signedTranscript, body: body)
        guard Signature.verify(signature, message: signed, publicKey: payload.deviceKey) else { throw .badSignature }
        guard constantTimeEqual(payload.accountKey, provedKey) else { throw .malformed }
        guard constantTimeEqual(provedKey, peer.accountKey) else {
            throw .keysDontMatch(presentedAccountKey: provedKey)
        }
        return VerifiedPeer(accountKey: payload.accountKey, deviceKey: payload.deviceKey,
                            deviceKeyIsPinned: payload.deviceKey == peer.deviceKey,
                            startedOver: payload.startedOver,
                            reconnectCounter: payload.startedOver ? nil : payload.reconnectCounter,
                            extensionBytes: payload.extensionBytes)
    }

    func session(keys: SessionKeys, ratchet: Ratchet, peer: VerifiedPeer) -> Session {
        Session(keys: keys, ratchet: ratchet, peer: peer,
                nextReconnectCounter: ReconnectCounter.next(mine: announcement.reconnectCounter, peers: peer.reconnectCounter))
    }
}
