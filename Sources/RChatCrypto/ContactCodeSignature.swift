import RChatCore

/// The proofs a genuine contact code carries (layout at `ContactCode`): the account key's
/// signature over the whole code, and its certificate for the device key.
extension ContactCode {
    /// This account's code, signed whole by its account key.
    public static func signed(name: String, account: SigningKey, device: [UInt8], relay: RelayAddress,
                              inviteToken: [UInt8]) -> ContactCode {
        var code = ContactCode(name: name, accountKey: account.publicKey, deviceKey: device,
                               deviceCertificate: DeviceCertificate.issue(deviceKey: device, account: account),
                               relay: relay, inviteToken: inviteToken, signature: [])
        code.signature = account.sign(signatureLabel + code.signedFields)
        return code
    }

    public enum Forgery: Error, Equatable, CustomStringConvertible {
        /// Some field was changed after the account signed the code (a relay or an invite
        /// token swapped in, with the checksum recomputed).
        case signature
        /// The device key is not certified by the account key.
        case deviceCertificate

        public var description: String {
            switch self {
            case .signature:
                return "the contact code's signature does not verify: it was altered after it was made (relay, invite or keys changed); ask for the code again"
            case .deviceCertificate:
                return "the code's device certificate does not verify: the code was altered or forged"
            }
        }
    }

    /// Throws unless the account key signed every field and certified the device key.
    public func verify() throws(Forgery) {
        guard Signature.verify(signature, message: Self.signatureLabel + signedFields, publicKey: accountKey) else { throw .signature }
        guard DeviceCertificate.verify(deviceCertificate, deviceKey: deviceKey, accountKey: accountKey) else { throw .deviceCertificate }
    }
}
