import RChatCore
import RChatCrypto
import RChatWire
import RChatStore

/// `rchat keys rotate`: a new account key, vouched for by the old one. Contacts learn it
/// inside a session made with the key they pinned, check the old key's signature, and pin
/// the new one; nothing is resent automatically (README, "When a contact loses their
/// state": you see how many messages may not have arrived).
enum KeyRotation {
    static let label = Array("rchat key rotation v1".utf8)

    static func statement(old: SigningKey, new: [UInt8]) -> [UInt8] {
        old.sign(label + old.publicKey + new)
    }

    /// What travels in the envelope: new key ‖ statement ‖ the device certificate by the new key.
    static func announcement(newKey: [UInt8], statement: [UInt8], certificate: [UInt8]) -> [UInt8] {
        newKey + statement + certificate
    }

    /// The new key and certificate, if `body` is a genuine rotation of `pinned` for `device`.
    static func verify(_ body: [UInt8], pinned: [UInt8], device: [UInt8]) -> (key: [UInt8], certificate: [UInt8])? {
        guard body.count == 32 + 64 + 64 else { return nil }
        let key = Array(body[0..<32]), statement = Array(body[32..<96]), certificate = Array(body[96...])
        guard key != pinned,
              Signature.verify(statement, message: label + pinned + key, publicKey: pinned),
              DeviceCertificate.verify(certificate, deviceKey: device, accountKey: key)
        else { return nil }
        return (key, certificate)
    }
}

extension AccountService {
    /// Rotates the account key and moves the account to a new mailbox and invite token, so
    /// that whoever holds a copy of the old keys loses the mailbox too: relays hand what they
    /// held for the old mailbox to the new one and refuse the old one from then on. Contacts
    /// keep being spoken to with the previous key until each accepts the new one; the contact
    /// code carries the new key and token from now on; each group's log says so (`Groups.rekeyAll`).
    public func rotateKeys() throws(EngineError) {
        guard var account = try Self.wrap({ try store.account() }) else { throw .noAccount(locations.home) }
        let me = try identity()
        let new = SigningKey.generate()
        let statement = KeyRotation.statement(old: me.accountKey, new: new.publicKey)
        var newSeed = new.seed.exposedCopy()
        var oldSeed = me.accountKey.seed.exposedCopy()
        var newMailbox = Random.bytes(SigningKey.seedBytes)
        var oldMailbox = me.mailboxSeed.exposedCopy()
        defer { wipe(&newSeed); wipe(&oldSeed); wipe(&newMailbox); wipe(&oldMailbox) }
        // Every secret sealed for this device (`AccountSecret`), each under its own column.
        account.previousSecretKey = sealingKey.seal(oldSeed, purpose: AccountSecret.previousAccountKey.purpose)
        account.secretKey = sealingKey.seal(newSeed, purpose: AccountSecret.accountKey.purpose)
        account.previousMailboxSeed = sealingKey.seal(oldMailbox, purpose: AccountSecret.previousMailboxSeed.purpose)
        account.mailboxSeed = sealingKey.seal(newMailbox, purpose: AccountSecret.mailboxSeed.purpose)
        account.secretsAtRest = .sealedToDevice
        account.publicKey = new.publicKey
        account.rotationStatement = statement
        account.mailboxMovedAt = clock.now()
        account.inviteSalt = Random.bytes(InviteToken.saltBytes)
        account.deviceSeal = sealingKey.seal(Array("rchat device binding".utf8), purpose: Self.sealPurpose(new.publicKey))
        let updated = account
        try Self.wrap {
            try store.transaction { tx in
                try tx.putAccount(updated)
                try tx.resetRotationAcknowledgements()
            }
        }
        // Each group's log names the account by its new key from its next change on: the
        // rekey, signed with the old key (a running engine, or the next to start, does it
        // too if this is cut short).
        let rotated = try identity()
        let t = clock.now()
        _ = try Self.wrap { try store.transaction { tx in try Groups.rekeyAll(as: rotated, tx, at: t, clock: clock) } }
        WakeSignal.poke(home: locations.home)
    }
}
