import XCTest
import RChatCore
@testable import RChatCrypto

private func secret(_ hex: String) -> SecretBytes {
    var bytes = Hex.decode(hex)!
    return SecretBytes(consuming: &bytes)
}

final class PrimitiveTests: XCTestCase {
    /// RFC 8032 §7.1, TEST 1 (empty message).
    func testEd25519KnownAnswer() throws {
        let key = try SigningKey(seed: secret("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
        XCTAssertEqual(Hex.encode(key.publicKey), "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let sig = key.sign([])
        XCTAssertEqual(Hex.encode(sig),
                       "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        XCTAssertTrue(Signature.verify(sig, message: [], publicKey: key.publicKey))
        XCTAssertEqual(key.seed.exposedCopy(), Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
    }

    /// RFC 7748 §5.2 (first vector) and §6.1 (Alice and Bob).
    func testX25519KnownAnswers() throws {
        let scalar = AgreementKey(secretKey: secret("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4"))
        let out = try scalar.sharedSecret(with: Hex.decode("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c")!)
        XCTAssertEqual(Hex.encode(out.exposedCopy()), "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552")

        let alice = AgreementKey(secretKey: secret("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = AgreementKey(secretKey: secret("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        XCTAssertEqual(Hex.encode(alice.publicKey), "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        XCTAssertEqual(Hex.encode(bob.publicKey), "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        let shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"
        XCTAssertEqual(Hex.encode(try alice.sharedSecret(with: bob.publicKey).exposedCopy()), shared)
        XCTAssertEqual(Hex.encode(try bob.sharedSecret(with: alice.publicKey).exposedCopy()), shared)
    }

    func testLowOrderPeerKeyIsRefused() {
        XCTAssertThrowsError(try AgreementKey.generate().sharedSecret(with: [UInt8](repeating: 0, count: 32)))
        XCTAssertThrowsError(try AgreementKey.generate().sharedSecret(with: [1, 2, 3]))
    }

    func testSignatureTamper() {
        let key = SigningKey.generate()
        let message = Array("hello".utf8)
        var sig = key.sign(message)
        XCTAssertTrue(Signature.verify(sig, message: message, publicKey: key.publicKey))
        XCTAssertFalse(Signature.verify(sig, message: Array("hellp".utf8), publicKey: key.publicKey))
        XCTAssertFalse(Signature.verify(sig, message: message, publicKey: SigningKey.generate().publicKey))
        sig[10] ^= 1
        XCTAssertFalse(Signature.verify(sig, message: message, publicKey: key.publicKey))
        XCTAssertFalse(Signature.verify([1, 2], message: message, publicKey: key.publicKey))
    }

    func testAccountKeyAgreementFormsMatch() throws {
        // The DH form of an account key: both sides reach the same secret from public keys alone.
        let a = SigningKey.generate(), b = SigningKey.generate()
        let aPub = try XCTUnwrap(Signature.agreementPublicKey(fromSigningKey: a.publicKey))
        let bPub = try XCTUnwrap(Signature.agreementPublicKey(fromSigningKey: b.publicKey))
        XCTAssertEqual(a.agreementKey().publicKey, aPub)
        let ab = try a.agreementKey().sharedSecret(with: bPub).exposedCopy()
        let ba = try b.agreementKey().sharedSecret(with: aPub).exposedCopy()
        XCTAssertEqual(ab, ba)
    }

    /// `AgreementPublicKeys` remembers what either conversion found: whichever comes first,
    /// the other gives the value its own computation would (the X25519 base point times the
    /// converted secret), for many keys; and the table stays within its bound.
    func testRememberedAgreementKeysMatchTheirComputation() throws {
        for i in 0..<64 {
            let key = SigningKey.generate()
            let fromPublic: [UInt8], fromSecret: AgreementKey
            if i % 2 == 0 {
                fromPublic = try XCTUnwrap(Signature.agreementPublicKey(fromSigningKey: key.publicKey))
                fromSecret = key.agreementKey()
            } else {
                fromSecret = key.agreementKey()
                fromPublic = try XCTUnwrap(Signature.agreementPublicKey(fromSigningKey: key.publicKey))
            }
            let computed = AgreementKey(secretKey: fromSecret.secretKey).publicKey
            XCTAssertEqual(fromSecret.publicKey, computed)
            XCTAssertEqual(fromPublic, computed)
            XCTAssertEqual(AgreementPublicKeys.shared.lookUp(key.publicKey), computed)
        }
        XCTAssertNil(Signature.agreementPublicKey(fromSigningKey: [1, 2, 3]))
        for _ in 0..<(RememberedResults<[UInt8], [UInt8]>.capacity + 10) {
            AgreementPublicKeys.shared.remember(Random.bytes(32), for: Random.bytes(32))
        }
        XCTAssertLessThanOrEqual(AgreementPublicKeys.shared.count, RememberedResults<[UInt8], [UInt8]>.capacity)
    }

    /// A certificate verified once verifies from memory; any other bytes — another device
    /// key, another account, one bit of the signature changed — are checked again and fail,
    /// also after the good one was remembered.
    func testRememberedCertificatesAreOnlyTheOnesThatVerified() {
        let account = SigningKey.generate(), device = SigningKey.generate(), other = SigningKey.generate()
        let certificate = DeviceCertificate.issue(deviceKey: device.publicKey, account: account)
        var forged = certificate
        forged[5] ^= 1
        XCTAssertFalse(DeviceCertificate.verify(forged, deviceKey: device.publicKey, accountKey: account.publicKey))
        XCTAssertNil(DeviceCertificate.verified.lookUp(forged + device.publicKey + account.publicKey), "a failure is not kept")
        for _ in 0..<2 {
            XCTAssertTrue(DeviceCertificate.verify(certificate, deviceKey: device.publicKey, accountKey: account.publicKey))
        }
        XCTAssertEqual(DeviceCertificate.verified.lookUp(certificate + device.publicKey + account.publicKey), true)
        XCTAssertFalse(DeviceCertificate.verify(forged, deviceKey: device.publicKey, accountKey: account.publicKey))
        XCTAssertFalse(DeviceCertificate.verify(certificate, deviceKey: other.publicKey, accountKey: account.publicKey))
        XCTAssertFalse(DeviceCertificate.verify(certificate, deviceKey: device.publicKey, accountKey: other.publicKey))
        // The same bytes split otherwise: a byte of the device key moved into the certificate.
        XCTAssertFalse(DeviceCertificate.verify(certificate + device.publicKey.prefix(1), deviceKey: Array(device.publicKey.dropFirst()),
                                                accountKey: account.publicKey))
    }

    func testAEADRoundTripAndTamper() throws {
        let key = SecretBytes(count: 32) { p in for i in 0..<32 { p[i] = UInt8(i) } }
        let nonce = Random.bytes(AEAD.nonceBytes)
        let plain = Array("attack at dawn".utf8)
        let box = AEAD.seal(plain, additionalData: [1], nonce: nonce, key: key)
        XCTAssertEqual(box.count, plain.count + AEAD.tagBytes)
        XCTAssertEqual(try AEAD.open(box, additionalData: [1], nonce: nonce, key: key), plain)
        XCTAssertThrowsError(try AEAD.open(box, additionalData: [2], nonce: nonce, key: key))
        var altered = box; altered[0] ^= 0x80
        XCTAssertThrowsError(try AEAD.open(altered, additionalData: [1], nonce: nonce, key: key))
        XCTAssertThrowsError(try AEAD.open(box, additionalData: [1], nonce: Random.bytes(24), key: key))
        XCTAssertThrowsError(try AEAD.open([1, 2, 3], nonce: nonce, key: key))
        XCTAssertEqual(try AEAD.open(AEAD.seal([], nonce: nonce, key: key), nonce: nonce, key: key), [])
        let withNonce = AEAD.sealWithRandomNonce(plain, key: key)
        XCTAssertEqual(try AEAD.openWithNonceInFront(withNonce, key: key), plain)
        XCTAssertNotEqual(AEAD.counterNonce(1, direction: 0), AEAD.counterNonce(1, direction: 1))
        XCTAssertNotEqual(AEAD.counterNonce(1, direction: 0), AEAD.counterNonce(2, direction: 0))
    }

    /// BLAKE2b-512 of "abc" (RFC 7693 Appendix A).
    func testBlake2bKnownAnswer() {
        XCTAssertEqual(Hex.encode(Hash.blake2b(Array("abc".utf8), outputBytes: 64)),
                       "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
    }

    func testDerivedKeysAreSeparatedByContextAndParts() {
        let root = SecretBytes(count: 32) { p in p[0] = 1 }
        let a = Hash.deriveKey(from: root, context: "a", [1, 2], [3]).exposedCopy()
        let b = Hash.deriveKey(from: root, context: "a", [1], [2, 3]).exposedCopy()
        let c = Hash.deriveKey(from: root, context: "b", [1, 2], [3]).exposedCopy()
        XCTAssertEqual(a, Hash.deriveKey(from: root, context: "a", [1, 2], [3]).exposedCopy())
        XCTAssertNotEqual(a, b)
        XCTAssertNotEqual(a, c)
    }

    func testSecretBytesConsumingWipesTheSource() {
        var source: [UInt8] = [1, 2, 3]
        let s = SecretBytes(consuming: &source)
        XCTAssertEqual(source, [])
        XCTAssertEqual(s.exposedCopy(), [1, 2, 3])
        var copy = s.exposedCopy()
        wipe(&copy)
        XCTAssertEqual(copy, [])
    }
}

final class SealedBoxTests: XCTestCase {
    func testOnlyTheRecipientOpens() throws {
        let recipient = SigningKey.generate().agreementKey()
        let box = try SealedBox.seal(Array("hello".utf8), to: recipient.publicKey)
        XCTAssertEqual(try SealedBox.open(box, with: recipient), Array("hello".utf8))
        XCTAssertThrowsError(try SealedBox.open(box, with: AgreementKey.generate()))
        var altered = box; altered[40] ^= 1
        XCTAssertThrowsError(try SealedBox.open(altered, with: recipient))
        XCTAssertThrowsError(try SealedBox.open([1, 2, 3], with: recipient))
        XCTAssertThrowsError(try SealedBox.seal([1], to: [1, 2]))
    }
}
