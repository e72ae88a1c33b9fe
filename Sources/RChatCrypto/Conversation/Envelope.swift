import RChatCore

/// What goes through the relay for a message, receipt or notice inside a session.
///
/// Frame layout:
///
///     u8  envelope version (2)
///     81  header box: 24-byte random nonce ‖ XChaCha20-Poly1305(header, ad = version)
///         under the header key for the sender (from the conversation secret)
///         header = u8 kind ‖ 16 message id ‖ u64 sequence ‖ 16 session id
///     ..  body box: XChaCha20-Poly1305(body) under the session's send key,
///         nonce = counterNonce(sequence, sender's role),
///         ad = "rchat envelope body v1" ‖ version ‖ header
///         body = `Padding`: content ‖ zeros ‖ u32 content length, as long as makes the
///         link frame that carries the envelope (a type byte in front, the padding trailer
///         behind: `framingBytes`) one of `Padding.payloadSizes`. The padding is inside
///         the encryption: the relay sees the size class, never the content's length.
///
/// Replaying a whole frame opens again (same id): the receiver keeps message ids unique.
public enum Envelope {
    public static let version: UInt8 = 2
    static let headerBoxBytes = AEAD.nonceBytes + EnvelopeHeader.encodedBytes + AEAD.tagBytes
    /// What the link frame carrying an envelope adds around it: its type byte and the
    /// padding trailer of the payload.
    public static let framingBytes = 1 + Padding.trailerBytes
    /// Everything in the padded payload besides the padded body.
    static let outsideBody = framingBytes + 1 + headerBoxBytes + AEAD.tagBytes
    /// The smallest possible frame (empty body).
    public static let minimumBytes = 1 + headerBoxBytes + AEAD.tagBytes

    public static func seal(kind: EnvelopeKind, messageID: MessageID, sequence: UInt64, body: [UInt8],
                            keys: SessionKeys, conversation: ConversationSecret) -> [UInt8] {
        seal(EnvelopeHeader(kind: kind, messageID: messageID, sequence: sequence, sessionID: keys.sessionID), body: body,
             keys: keys, conversation: conversation)
    }

    /// Seals under `header` as it is (tests play a later version with a kind this one does not know).
    static func seal(_ header: EnvelopeHeader, body: [UInt8], keys: SessionKeys, conversation: ConversationSecret) -> [UInt8] {
        let sequence = header.sequence
        let headerKey = conversation.sendHeaderKey
        let headerBox = AEAD.sealWithRandomNonce(header.encoded(), additionalData: [version], key: headerKey)
        let bodyBox = AEAD.seal(Padding.padded(body, sizes: Padding.payloadSizes, outside: outsideBody), additionalData: header.bodyAssociatedData(frameVersion: version),
                                nonce: AEAD.counterNonce(sequence, direction: keys.role.rawValue), key: keys.sendKey)
        return [version] + headerBox + bodyBox
    }

    /// Reads the header of a frame from the peer with only the conversation secret.
    public static func openHeader(_ frame: [UInt8], conversation: ConversationSecret) throws(EnvelopeError) -> EnvelopeHeader {
        try openHeader(frame[...], conversation: conversation)
    }

    /// The same for a frame inside a larger buffer (a relay delivery), without copying it out.
    public static func openHeader(_ frame: ArraySlice<UInt8>, conversation: ConversationSecret) throws(EnvelopeError) -> EnvelopeHeader {
        let headerBox = try split(frame).headerBox
        let headerKey = conversation.receiveHeaderKey
        let plain: [UInt8]
        do { plain = try AEAD.openWithNonceInFront(headerBox, additionalData: [version], key: headerKey) }
        catch { throw .headerUnreadable }
        return try EnvelopeHeader.decode(plain)
    }

    /// Opens the body with the key of the header's session.
    public static func openBody(_ frame: [UInt8], header: EnvelopeHeader, key: ReceiveKey) throws(EnvelopeError) -> [UInt8] {
        try openBody(frame[...], header: header, key: key)
    }

    public static func openBody(_ frame: ArraySlice<UInt8>, header: EnvelopeHeader, key: ReceiveKey) throws(EnvelopeError) -> [UInt8] {
        guard constantTimeEqual(header.sessionID, key.sessionID) else { throw .wrongSession }
        let bodyBox = try split(frame).bodyBox
        var body: [UInt8]
        do {
            body = try AEAD.open(bodyBox, additionalData: header.bodyAssociatedData(frameVersion: version)[...],
                                 counter: header.sequence, direction: key.senderRole.rawValue, key: key.key)
        } catch {
            throw .bodyUnreadable
        }
        // Sealed by the holder of the session key with padding that does not unpad: malformed.
        guard let content = try? Padding.unpadded(body[...]) else { throw .malformed }
        body.removeSubrange(content.endIndex...)
        return body
    }

    /// Opens the body with whichever of `keys` belongs to the header's session
    /// (e.g. `SavedSessionState.receiveKeys`); `.wrongSession` when none does.
    public static func openBody(_ frame: [UInt8], header: EnvelopeHeader, keys: [ReceiveKey]) throws(EnvelopeError) -> [UInt8] {
        guard let key = keys.first(where: { $0.sessionID == header.sessionID }) else { throw .wrongSession }
        return try openBody(frame, header: header, key: key)
    }

    /// The two boxes, as slices of the frame (not copies).
    private static func split(_ frame: ArraySlice<UInt8>) throws(EnvelopeError) -> (headerBox: ArraySlice<UInt8>, bodyBox: ArraySlice<UInt8>) {
        guard let v = frame.first else { throw .malformed }
        guard v == version else { throw .unsupportedVersion(v) }
        guard frame.count >= minimumBytes else { throw .malformed }
        let boxes = frame.startIndex + 1
        return (frame[boxes..<(boxes + headerBoxBytes)], frame[(boxes + headerBoxBytes)...])
    }
}
