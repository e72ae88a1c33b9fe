import Foundation
import RChatCore

/// The key that seals each conversation's saved state at rest (docs/ARCHITECTURE.md, "Secrets at rest"): derived from the
/// device key and this machine's id, so the sealed state opens only here — copied to
/// another machine or restored from a backup, it does not.
public struct SealingKey: Sendable {
    let key: SecretBytes
    /// False when /etc/machine-id was missing and the device key alone was used.
    public let boundToMachine: Bool

    public init(deviceKey: SigningKey, machineID: String?) {
        let id = machineID?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        boundToMachine = !id.isEmpty
        key = Hash.deriveKey(from: deviceKey.seed, context: "rchat sealing key v1", Array(id.utf8))
    }

    /// This machine's id, or nil where there is none.
    public static func readMachineID(path: String = "/etc/machine-id") -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }

    /// `purpose` binds a box to its use (e.g. the conversation it belongs to), so a box
    /// moved between rows does not open either.
    public func seal(_ plaintext: [UInt8], purpose: [UInt8]) -> [UInt8] {
        AEAD.sealWithRandomNonce(plaintext, additionalData: purpose, key: key)
    }

    public func open(_ box: [UInt8], purpose: [UInt8]) throws(CryptoError) -> [UInt8] {
        try AEAD.openWithNonceInFront(box, additionalData: purpose, key: key)
    }
}
