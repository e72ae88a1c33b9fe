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
        Signature.verify(certificate, message: message(deviceKey: deviceKey), publicKey: accountKey)
    }
}
