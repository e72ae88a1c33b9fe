import RChatCore

/// What goes through the relay for a message, receipt or notice inside a session.
///
/// Frame layout (version 3):
///
///     u8  envelope version (3)
///     121 header box: 24-byte random nonce ‖ XChaCha20-Poly1305(header, ad = version)
///         under the header key for the sender (from the conversation secret)
///         header = u8 kind ‖ 16 message id ‖ u64 sequence ‖ 16 session id ‖
///                  32 sender's ratchet key ‖ u32 previous chain's count ‖ u32 number
///     ..  body box: XChaCha20-Poly1305(body) under the envelope's own message key from
///         the session's Double Ratchet (`Ratchet`), nonce = counterNonce(sequence,
///         sender's role), ad = "rchat envelope body v1" ‖ version ‖ header
///         body = `Padding`: content ‖ zeros ‖ u32 content length, as long as makes the
///         link frame that carries the envelope (a type byte in front, the padding trailer
///         behind: `framingBytes`) one of `Padding.payloadSizes`. The padding is inside
///         the encryption: the relay sees the size class, never the content's length.
///
/// Version 2 (before the ratchet; read, never written): the header without its ratchet
/// part (81-byte header box), the body under the session's key for its direction.
///
/// Each message key opens one body once: a replayed frame does not open again
/// (`EnvelopeError.replayed`); the receiver keeps message ids unique besides.
public enum Envelope {
    public static let version: UInt8 = 3
    /// The frame version before the ratchet, still read from older sessions.
    public static let legacyVersion: UInt8 = 2
    static let headerBoxBytes = headerBoxBytes(frameVersion: version)
    static func headerBoxBytes(frameVersion: UInt8) -> Int {
        AEAD.nonceBytes + EnvelopeHeader.encodedBytes(frameVersion: frameVersion) + AEAD.tagBytes
    }
    /// What the link frame carrying an envelope adds around it: its type byte and the
    /// padding trailer of the payload.
    public static let framingBytes = 1 + Padding.trailerBytes
    /// Everything in the padded payload besides the padded body.
    static let outsideBody = framingBytes + 1 + headerBoxBytes + AEAD.tagBytes
    /// The smallest possible frame (empty body).
    public static let minimumBytes = 1 + headerBoxBytes + AEAD.tagBytes

    /// Seals `body` under `header` with `key`, the message key its ratchet header names (a
    /// header without one: a version-2 frame under the session's key, as tests of reading
    /// older frames make them).
    public static func seal(_ header: EnvelopeHeader, body: [UInt8], key: SecretBytes, senderRole: Handshake.Role,
                            conversation: ConversationSecret) -> [UInt8] {
        let version = header.frameVersion
        let headerBox = AEAD.sealWithRandomNonce(header.encoded(), additionalData: [version], key: conversation.sendHeaderKey)
        let outside = framingBytes + 1 + headerBoxBytes(frameVersion: version) + AEAD.tagBytes
        let bodyBox = AEAD.seal(Padding.padded(body, sizes: Padding.payloadSizes, outside: outside), additionalData: header.bodyAssociatedData(),
                                nonce: AEAD.counterNonce(header.sequence, direction: senderRole.rawValue), key: key)
        return [version] + headerBox + bodyBox
    }

    /// Reads the header of a frame from the peer with only the conversation secret.
    public static func openHeader(_ frame: [UInt8], conversation: ConversationSecret) throws(EnvelopeError) -> EnvelopeHeader {
        try openHeader(frame[...], conversation: conversation)
    }

    /// The same for a frame inside a larger buffer (a relay delivery), without copying it out.
    public static func openHeader(_ frame: ArraySlice<UInt8>, conversation: ConversationSecret) throws(EnvelopeError) -> EnvelopeHeader {
        let (version, headerBox, _) = try split(frame)
        let plain: [UInt8]
        do { plain = try AEAD.openWithNonceInFront(headerBox, additionalData: [version], key: conversation.receiveHeaderKey) }
        catch { throw .headerUnreadable }
        return try EnvelopeHeader.decode(plain, frameVersion: version)
    }

    /// Opens the body with `key`: the message key the header names (`SavedSessionState.open`
    /// finds it), or a version-2 frame's session key.
    public static func openBody(_ frame: ArraySlice<UInt8>, header: EnvelopeHeader, key: SecretBytes,
                                senderRole: Handshake.Role) throws(EnvelopeError) -> [UInt8] {
        let (_, _, bodyBox) = try split(frame)
        var body: [UInt8]
        do {
            body = try AEAD.open(bodyBox, additionalData: header.bodyAssociatedData()[...],
                                 counter: header.sequence, direction: senderRole.rawValue, key: key)
        } catch {
            throw .bodyUnreadable
        }
        // Sealed by the holder of the session key with padding that does not unpad: malformed.
        guard let content = try? Padding.unpadded(body[...]) else { throw .malformed }
        body.removeSubrange(content.endIndex...)
        return body
    }

    /// The version and two boxes, as slices of the frame (not copies).
    private static func split(_ frame: ArraySlice<UInt8>) throws(EnvelopeError)
        -> (version: UInt8, headerBox: ArraySlice<UInt8>, bodyBox: ArraySlice<UInt8>) {
        guard let v = frame.first else { throw .malformed }
        guard v == version || v == legacyVersion else { throw .unsupportedVersion(v) }
        let headerBytes = headerBoxBytes(frameVersion: v)
        guard frame.count >= 1 + headerBytes + AEAD.tagBytes else { throw .malformed }
        let boxes = frame.startIndex + 1
        return (v, frame[boxes..<(boxes + headerBytes)], frame[(boxes + headerBytes)...])
    }
}
