import RChatCore

/// The account's signature over a device key: "this machine speaks for this account".
/// A contact pins both keys from the code; the certificate proves they belong together.
public enum DeviceCertificate {
    static func message(deviceKey: [UInt8]) -> [UInt8] {
        Array("rchat device certificate v1".utf8) + deviceKey
    }

    public static func issue(deviceKey: [UInt8], account: SigningKey) -> [UInt8] {
        account.sign(message(deviceKey: deviceKey))
    }

    public static func verify(_ certificate: [UInt8], deviceKey: [UInt8], accountKey: [UInt8]) -> Bool {
        // Exact lengths first: bytes moved from one field to the next must not make the
        // remembered concatenation of a good certificate.
        guard certificate.count == SigningKey.signatureBytes, deviceKey.count == SigningKey.publicKeyBytes,
              accountKey.count == SigningKey.publicKeyBytes else { return false }
        let presented = certificate + deviceKey + accountKey
        if verified.lookUp(presented) != nil { return true }
        guard Signature.verify(certificate, message: message(deviceKey: deviceKey), publicKey: accountKey) else { return false }
        verified.remember(true, for: presented)
        return true
    }

    /// Certificates this process verified (their bytes with both keys'): every handshake
    /// presents the same one again, and checking its signature each time was a twentieth of
    /// the simulation's time. Only what verified is kept; a forged one is checked every time.
    static let verified = RememberedResults<[UInt8], Bool>()
}
