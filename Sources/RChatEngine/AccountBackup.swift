import RChatCore
import RChatCrypto

/// What `rchat account export` writes, sealed under a passphrase: the account keys, settings,
/// contacts with their pinned keys and the people known through groups (a new install knows
/// their channels at once: what they sealed for the old one is named in a could-not-read
/// notice, not lost as a frame nobody can place) — never session state, messages, groups
/// or the device key (like a phone backup that excludes the sealed state).
///
/// Version 2 adds, per person, whether they are a member known only through a group and
/// the contact code kept for them; a version-1 export still restores (contacts only).
public struct AccountBackup: Equatable {
    static let magic = Array("rchat account v2".utf8)
    static let magicV1 = Array("rchat account v1".utf8)

    public struct Contact: Equatable {
        public var name: String
        public var accountKey: [UInt8]
        public var deviceKey: [UInt8]
        public var deviceCertificate: [UInt8]
        public var relay: String
        public var inviteToken: [UInt8]
        public var blocked: Bool
        public var muted: Bool
        /// Known only through a group: restored as such (no conversation, not listed).
        public var member: Bool = false
        /// Their contact code as last entered, to hand on to a group's other members.
        public var code: String? = nil
    }

    public var name: String
    public var relay: String
    /// The account key's 32-byte seed. Wiped by `wipeSecrets()` once used.
    public var accountSeed: [UInt8]
    /// What the account's invite token is derived from, with the mailbox (`InviteToken.derived`).
    public var inviteSalt: [UInt8]
    /// The mailbox key's seed (secret; wiped with the account seed).
    public var mailboxSeed: [UInt8]
    public var settings: [String: String]
    public var contacts: [Contact]

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 512)
        w.raw(Self.magic)
        w.string(name)
        w.string(relay)
        w.short(accountSeed)
        w.short(inviteSalt)
        w.short(mailboxSeed)
        w.u32(UInt32(settings.count))
        for (k, v) in settings.sorted(by: { $0.key < $1.key }) { w.string(k); w.string(v) }
        w.u32(UInt32(contacts.count))
        for c in contacts {
            w.string(c.name); w.short(c.accountKey); w.short(c.deviceKey); w.short(c.deviceCertificate)
            w.string(c.relay); w.short(c.inviteToken); w.u8(c.blocked ? 1 : 0); w.u8(c.muted ? 1 : 0)
            w.u8(c.member ? 1 : 0); w.string(c.code ?? "")
        }
        return w.bytes
    }

    public init(name: String, relay: String, accountSeed: [UInt8], inviteSalt: [UInt8], mailboxSeed: [UInt8],
                settings: [String: String], contacts: [Contact]) {
        self.name = name; self.relay = relay; self.accountSeed = accountSeed; self.inviteSalt = inviteSalt
        self.mailboxSeed = mailboxSeed; self.settings = settings; self.contacts = contacts
    }

    public init(decoding bytes: [UInt8]) throws(EngineError) {
        var r = ByteReader(bytes)
        do {
            let version = try r.raw(Self.magic.count)
            guard version == Self.magic || version == Self.magicV1 else { throw EngineError.crypto("not an rChat account export") }
            name = try r.string()
            relay = try r.string()
            accountSeed = try r.short()
            inviteSalt = try r.short()
            mailboxSeed = try r.short()
            var settings: [String: String] = [:]
            let settingCount = try r.u32()
            guard settingCount < 10_000 else { throw ByteReaderError(offset: r.offset) }
            for _ in 0..<settingCount { settings[try r.string()] = try r.string() }
            self.settings = settings
            var contacts: [Contact] = []
            let contactCount = try r.u32()
            guard contactCount < 1_000_000 else { throw ByteReaderError(offset: r.offset) }
            for _ in 0..<contactCount {
                var c = Contact(name: try r.string(), accountKey: try r.short(), deviceKey: try r.short(),
                                deviceCertificate: try r.short(), relay: try r.string(), inviteToken: try r.short(),
                                blocked: try r.u8() != 0, muted: try r.u8() != 0)
                if version == Self.magic {
                    let kind = try r.u8()
                    guard kind <= 1 else { throw ByteReaderError(offset: r.offset) }
                    c.member = kind == 1
                    let code = try r.string()
                    c.code = code.isEmpty ? nil : code
                }
                contacts.append(c)
            }
            self.contacts = contacts
            guard r.isAtEnd, accountSeed.count == SigningKey.seedBytes, mailboxSeed.count == SigningKey.seedBytes else { throw ByteReaderError(offset: r.offset) }
        } catch let e as EngineError {
            throw e
        } catch {
            throw .crypto("the account export is damaged")
        }
    }

    public mutating func wipeSecrets() {
        wipe(&accountSeed)
        wipe(&mailboxSeed)
    }
}
