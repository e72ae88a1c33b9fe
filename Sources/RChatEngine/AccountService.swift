import Foundation
import RChatCore
import RChatCrypto
import RChatWire
import RChatSQL
import RChatStore

/// An account opened on this machine: its store, its device key and the keys derived from
/// them. Opening checks that the data belongs to this device and machine before anything
/// else reads it, and changes nothing when it does not.
public final class AccountService {
    public let locations: Locations
    public let store: Store
    public let device: SigningKey
    public let sealingKey: SealingKey
    public let clock: Clock

    public init(locations: Locations, clock: Clock = SystemClock()) throws(EngineError) {
        self.locations = locations
        self.clock = clock
        // Before anything in them is read: another user's home or device directory is refused.
        try PrivateFiles.checkDirectory(locations.home)
        try PrivateFiles.checkDirectory(locations.deviceDirectory)
        guard !Self.holdsNoDatabase(locations) else { throw .noAccount(locations.home) }
        let keystore = DeviceKeystore(directory: locations.deviceDirectory)
        // A damaged key file is refused before the database is even opened.
        let device = keystore.exists ? try keystore.load() : nil
        let store = try Self.openStore(locations)
        self.store = store
        do throws(EngineError) {
            guard let account = try Self.wrap({ try store.account() }) else { throw EngineError.noAccount(locations.home) }
            guard let device else { throw Self.anotherDevice(locations) }
            self.device = device
            sealingKey = keystore.sealingKey(for: device)
            guard constantTimeEqual(device.publicKey, account.deviceKey),
                  (try? sealingKey.open(account.deviceSeal, purpose: Self.sealPurpose(account.publicKey))) != nil
            else { throw Self.anotherDevice(locations) }
            if account.secretsAtRest == .clear { try Self.sealSecretsKeptInTheClear(in: store, with: sealingKey) }
        } catch {
            // Refused: nothing written, not even a checkpoint of the log.
            store.database.leaveAsItIs()
            store.close()
            throw error
        }
        // What disappeared while rChat was closed goes before anything is shown or alerted.
        do throws(EngineError) {
            _ = try deleteExpired()
        } catch {
            // Refused: nothing written, not even a checkpoint of the log.
            store.database.leaveAsItIs()
            store.close()
            throw error
        }
    }

    deinit { store.close() }

    // MARK: creating and restoring

    /// `rchat init --name --relay`: a new account, and this machine's device key if none.
    @discardableResult
    public static func create(at locations: Locations, name: String, relay: RelayAddress,
                              clock: Clock = SystemClock()) throws(EngineError) -> AccountIdentity {
        try refuseExistingAccount(locations)
        let accountKey = SigningKey.generate()
        let identity = AccountIdentity(name: name, relay: relay, accountKey: accountKey,
                                       inviteSalt: Random.bytes(InviteToken.saltBytes),
                                       mailboxSeed: AccountIdentity.firstMailboxSeed(for: accountKey))
        try install(identity, at: locations, clock: clock) { _ in }
        return identity
    }

    /// `rchat init --import FILE`: the account, settings and contacts from an export, into a
    /// home with no account. A wrong passphrase creates nothing. The passphrase is asked for
    /// only once the file's header is known to be an export with acceptable costs.
    @discardableResult
    public static func restore(at locations: Locations, from file: String, passphrase: @autoclosure () -> String,
                               clock: Clock = SystemClock()) throws(EngineError) -> AccountIdentity {
        var sealed: [UInt8]
        do { sealed = try PrivateFiles.read(file) } catch { throw .io("cannot read the account export \(file)") }
        var plain: [UInt8]
        do {
            _ = try PassphraseSeal.Header(parsing: sealed)
            plain = try PassphraseSeal.open(sealed, passphrase: passphrase())
        } catch .decryptionFailed {
            throw .crypto("wrong passphrase, or the account export \(file) was altered")
        } catch .unacceptableCost {
            throw .crypto("the account export \(file) asks for a key-derivation cost rChat does not accept "
                          + "(it was not written by rChat, or was altered); nothing was derived or restored")
        } catch .outOfMemory {
            throw .crypto("not enough memory to derive the key of the account export \(file)")
        } catch {
            throw .crypto("\(file) is not an rChat account export")
        }
        defer { wipe(&plain); wipe(&sealed) }
        var backup = try AccountBackup(decoding: plain)
        defer { backup.wipeSecrets() }
        return try restore(at: locations, backup: backup, clock: clock)
    }

    /// The account, settings and contacts of a backup (an export once opened), into a home
    /// with no account: what `restore(at:from:passphrase:)` does after the passphrase, and
    /// what the simulation's reinstalls do without one.
    @discardableResult
    public static func restore(at locations: Locations, backup: AccountBackup, clock: Clock) throws(EngineError) -> AccountIdentity {
        guard let relay = try? RelayAddress(parsing: backup.relay) else { throw .crypto("the account export holds an invalid relay address") }
        var seed = backup.accountSeed
        let accountKey: SigningKey
        do { accountKey = try SigningKey(seed: SecretBytes(consuming: &seed)) } catch { throw .crypto("the account export is damaged") }
        try refuseExistingAccount(locations)
        var mailbox = backup.mailboxSeed
        let identity = AccountIdentity(name: backup.name, relay: relay, accountKey: accountKey, inviteSalt: backup.inviteSalt,
                                       mailboxSeed: SecretBytes(consuming: &mailbox))
        try install(identity, at: locations, clock: clock) { tx in
            let now = clock.now()
            for (key, value) in backup.settings { try tx.setSetting(key, value) }
            for c in backup.contacts {
                let contact = try tx.addContact(NewContact(name: c.name, accountKey: c.accountKey, deviceKey: c.deviceKey,
                                                           deviceCertificate: c.deviceCertificate, relayAddress: c.relay,
                                                           inviteToken: c.inviteToken, state: .ok, code: c.code,
                                                           kind: c.member ? .member : .contact), at: now)
                if c.blocked { try tx.setBlocked(contact: contact.id, true) }
                if c.muted { try tx.setMuted(contact: contact.id, true) }
            }
        }
        return identity
    }

    private static func refuseExistingAccount(_ locations: Locations) throws(EngineError) {
        guard FileManager.default.fileExists(atPath: locations.databasePath) else { return }
        let store = try openStore(locations)
        defer { store.close() }
        if try wrap({ try store.account() }) != nil { throw .accountExists(locations.home) }
    }

    private static func install(_ identity: AccountIdentity, at locations: Locations, clock: Clock,
                                extra: (StoreTransaction) throws -> Void) throws(EngineError) {
        // Another user's home is refused before anything, a device key included, is written.
        try PrivateFiles.checkDirectory(locations.home)
        let keystore = DeviceKeystore(directory: locations.deviceDirectory)
        let device = try keystore.loadOrCreate()
        try PrivateFiles.makeDirectory(locations.home)
        try writeCacheDirTag(in: locations.home)
        let store = try openStore(locations)
        defer { store.close() }
        var secret = identity.accountKey.seed.exposedCopy()
        var mailbox = identity.mailboxSeed.exposedCopy()
        defer { wipe(&secret); wipe(&mailbox) }
        let sealingKey = keystore.sealingKey(for: device)
        let seal = sealingKey.seal(Array("rchat device binding".utf8), purpose: sealPurpose(identity.accountKey.publicKey))
        let account = Account(name: identity.name, relayAddress: identity.relay.description,
                              publicKey: identity.accountKey.publicKey,
                              secretKey: sealingKey.seal(secret, purpose: AccountSecret.accountKey.purpose),
                              inviteSalt: identity.inviteSalt,
                              mailboxSeed: sealingKey.seal(mailbox, purpose: AccountSecret.mailboxSeed.purpose),
                              deviceKey: device.publicKey, deviceSeal: seal, secretsAtRest: .sealedToDevice, createdAt: clock.now())
        try wrap {
            try store.transaction { tx in
                // Checked again inside the transaction: two `init`s racing cannot both win.
                if try tx.account() != nil { throw EngineError.accountExists(locations.home) }
                try tx.putAccount(account)
                try extra(tx)
            }
        }
    }

    /// Tells backup tools that honour it to skip the directory holding sealed state: it
    /// cannot be opened elsewhere, and an account moves with `rchat account export`.
    static func writeCacheDirTag(in directory: String) throws(EngineError) {
        let path = "\(directory)/CACHEDIR.TAG"
        guard !FileManager.default.fileExists(atPath: path) else { return }
        let text = """
        Signature: 8a477f597d28d172789f06886806bc55
        # This file is a cache directory tag created by rChat.
        # Its sealed session state opens only on this machine; back the account up with
        # `rchat account export` instead.

        """
        try PrivateFiles.write(Array(text.utf8), to: path)
    }

    static func sealPurpose(_ accountKey: [UInt8]) -> [UInt8] { Array("device binding".utf8) + accountKey }

    /// The account's secrets as its row keeps them: each sealed with the device's sealing
    /// key (derived from the device key and the machine id) and bound to its column, so a
    /// copy of `rchat.db` — a backup that ignores CACHEDIR.TAG — yields no key without this
    /// device directory on this machine. An account moves with `rchat account export`.
    enum AccountSecret: String {
        case accountKey = "account key"
        case previousAccountKey = "previous account key"
        case mailboxSeed = "mailbox seed"
        case previousMailboxSeed = "previous mailbox seed"

        var purpose: [UInt8] { Array("rchat account secret v1: \(rawValue)".utf8) }
    }

    /// A row written before the secrets were sealed (schema version 1) is sealed the first
    /// time the account is opened with its device, overwriting the clear bytes for good.
    private static func sealSecretsKeptInTheClear(in store: Store, with key: SealingKey) throws(EngineError) {
        try wrap {
            try store.overwritingSecrets { tx in
                // Checked in the transaction: another process may have sealed it meanwhile.
                guard var account = try tx.account(), account.secretsAtRest == .clear else { return }
                account.secretKey = key.seal(account.secretKey, purpose: AccountSecret.accountKey.purpose)
                account.mailboxSeed = key.seal(account.mailboxSeed, purpose: AccountSecret.mailboxSeed.purpose)
                account.previousSecretKey = account.previousSecretKey.map { key.seal($0, purpose: AccountSecret.previousAccountKey.purpose) }
                account.previousMailboxSeed = account.previousMailboxSeed.map { key.seal($0, purpose: AccountSecret.previousMailboxSeed.purpose) }
                account.secretsAtRest = .sealedToDevice
                try tx.putAccount(account)
            }
        }
    }

    /// One of the account's secrets, opened. A box that does not open on the device the
    /// row belongs to is a damaged record.
    /// A signing key from one of the account row's stored seeds.
    private func openKey(_ stored: [UInt8], _ which: AccountSecret, of account: Account) throws(EngineError) -> SigningKey {
        var seed = try openSecret(stored, which, of: account)
        guard let key = try? SigningKey(seed: SecretBytes(consuming: &seed)) else {
            throw .accountRecord("the account record in \(locations.databasePath) is damaged")
        }
        return key
    }

    func openSecret(_ stored: [UInt8], _ which: AccountSecret, of account: Account) throws(EngineError) -> [UInt8] {
        switch account.secretsAtRest {
        case .clear:
            return stored
        case .sealedToDevice:
            do {
                return try sealingKey.open(stored, purpose: which.purpose)
            } catch {
                throw .accountRecord("the \(which.rawValue) in \(locations.databasePath) does not open with this device's key (\(error)): the record is damaged; restore the account with `rchat init --import`")
            }
        }
    }

    /// No `rchat.db`, or a 0-byte one with no write-ahead log beside it (an `rchat init`
    /// stopped before its first write): no account, and opening it would write SQLite's
    /// header, log and index into it — a command that fails leaves it as it was.
    static func holdsNoDatabase(_ locations: Locations) -> Bool {
        func size(_ path: String) -> off_t? {
            var st = stat()
            return lstat(path, &st) == 0 ? st.st_size : nil
        }
        guard let bytes = size(locations.databasePath) else { return true }
        guard bytes == 0 && (size(locations.databasePath + "-wal") ?? 0) == 0 else { return false }
        // Empty to SQLite too, whose file system may keep the bytes elsewhere (the simulated
        // disk of RChatSimulation): read-only, so nothing is written into it.
        let pages = try? Database(path: locations.databasePath, readOnly: true).queryOne("PRAGMA page_count")?.int(at: 0)
        return (pages ?? 0) == 0
    }

    static func anotherDevice(_ locations: Locations) -> EngineError {
        .deviceKey("the account data in \(locations.home) belongs to another device or machine (its sealed state cannot be opened with \(locations.deviceDirectory)); restore the account into a new home with `rchat init --import`")
    }

    /// The home is checked (`PrivateFiles.checkDirectory`) and `rchat.db` opened only as a
    /// file of its own: a symlink there is refused, never followed.
    static func openStore(_ locations: Locations) throws(EngineError) -> Store {
        try PrivateFiles.checkDirectory(locations.home)
        var st = stat()
        if lstat(locations.databasePath, &st) == 0, st.st_mode & S_IFMT == S_IFLNK {
            throw .io("\(locations.databasePath) is a symbolic link: rChat opens its database only as a file in the home, never through a link")
        }
        return try wrap { try Store(home: locations.home) }
    }

    /// Store and database errors become engine errors that keep them (one clear line for
    /// the user); damage (SQLite finds the file malformed) is `.damaged`, after which
    /// nothing more is written.
    static func wrap<T>(_ body: () throws -> T) throws(EngineError) -> T {
        do {
            return try body()
        } catch let error as EngineError {
            throw error
        } catch let error as StoreError {
            if case .unreadable = error { throw .damaged(.file(error)) }
            throw .store(error)
        } catch let error as DatabaseError {
            throw error.isUnreadableFile ? .damaged(.database(error)) : .database(error)
        } catch {
            throw .io("\(error)")
        }
    }

    // MARK: the account

    public func identity() throws(EngineError) -> AccountIdentity {
        try identity(unless: nil)
    }

    /// The identity the account row holds now; `known` itself if it was opened from the
    /// same row (nothing to open or derive again).
    func identity(unless known: AccountIdentity?) throws(EngineError) -> AccountIdentity {
        guard let account = try Self.wrap({ try store.account() }) else { throw .noAccount(locations.home) }
        if let known, known.record == account { return known }
        var seed = try openSecret(account.secretKey, .accountKey, of: account)
        var mailbox = try openSecret(account.mailboxSeed, .mailboxSeed, of: account)
        guard let key = try? SigningKey(seed: SecretBytes(consuming: &seed)), mailbox.count == SigningKey.seedBytes,
              let relay = try? RelayAddress(parsing: account.relayAddress)
        else { throw .accountRecord("the account record in \(locations.databasePath) is damaged") }
        var previous: AccountIdentity.Rotation?
        if let sealedOld = account.previousSecretKey, let statement = account.rotationStatement {
            previous = AccountIdentity.Rotation(key: try openKey(sealedOld, .previousAccountKey, of: account), statement: statement)
        }
        var movedFrom: AccountIdentity.MovedMailbox?
        if let sealedOldMailbox = account.previousMailboxSeed, let at = account.mailboxMovedAt {
            movedFrom = AccountIdentity.MovedMailbox(key: try openKey(sealedOldMailbox, .previousMailboxSeed, of: account), at: at)
        }
        return AccountIdentity(name: account.name, relay: relay, accountKey: key, inviteSalt: account.inviteSalt,
                               mailboxSeed: SecretBytes(consuming: &mailbox), previous: previous, movedFrom: movedFrom,
                               record: account)
    }

    public func contactCode() throws(EngineError) -> ContactCode {
        try identity().contactCode(device: device)
    }

    /// `rchat account export FILE`: keys, settings and contacts under a passphrase.
    public func export(to file: String, passphrase: String) throws(EngineError) {
        var backup = try backup()
        var plain = backup.encoded()
        backup.wipeSecrets()
        defer { wipe(&plain) }
        let sealed: [UInt8]
        do { sealed = try PassphraseSeal.seal(plain, passphrase: passphrase) } catch { throw .crypto("\(error)") }
        try PrivateFiles.write(sealed, to: file)
    }

    /// What an export holds — keys, settings, contacts and members — before the passphrase seals it.
    /// The caller wipes it (`AccountBackup.wipeSecrets`).
    public func backup() throws(EngineError) -> AccountBackup {
        let me = try identity()
        var seed = me.accountKey.seed.exposedCopy()
        var mailbox = me.mailboxSeed.exposedCopy()
        // The people known through groups too: a new install then has their channels at once.
        // In the order they were met, which a restore keeps (a group lists its members so).
        let contacts = try Self.wrap { try store.contacts(includingMembers: true) }.filter { $0.state != .request }
            .sorted { $0.id.rawValue < $1.id.rawValue }
        let backup = AccountBackup(
            name: me.name, relay: me.relay.description, accountSeed: seed, inviteSalt: me.inviteSalt, mailboxSeed: mailbox,
            settings: try Self.wrap { try store.settings() },
            contacts: contacts.map {
                AccountBackup.Contact(name: $0.name, accountKey: $0.accountKey, deviceKey: $0.deviceKey,
                                      deviceCertificate: $0.deviceCertificate, relay: $0.relayAddress ?? "",
                                      inviteToken: $0.inviteToken ?? [], blocked: $0.isBlocked, muted: $0.isMuted,
                                      member: $0.kind == .member, code: $0.code)
            })
        wipe(&seed)
        wipe(&mailbox)
        return backup
    }
}
