import RChatSQL

/// How the account's secrets are kept in its row.
public enum SecretsAtRest: Int64, Equatable, Sendable {
    /// Written before schema version 3: the bytes themselves.
    case clear = 0
    /// Each a box sealed with the device's sealing key (the engine seals and opens them).
    case sealedToDevice = 1
}

/// This side's account, as stored (one per database).
public struct Account: Equatable, Sendable {
    public var name: String
    /// The relay address text (`HOST:PORT/KEY`).
    public var relayAddress: String
    public var publicKey: [UInt8]
    /// The account key's seed, as `secretsAtRest` says. Portable: exported in the
    /// passphrase-sealed backup.
    public var secretKey: [UInt8]
    /// The salt the invite token is derived from with the mailbox (`InviteToken.derived`);
    /// stored in the column `invite_token`, its name from before tokens were derived.
    public var inviteSalt: [UInt8]
    /// The mailbox key's seed, as `secretsAtRest` says.
    public var mailboxSeed: [UInt8]
    /// After `keys rotate`: the previous account key's seed (as `secretsAtRest` says) and
    /// its signature over the new key.
    public var previousSecretKey: [UInt8]?
    public var rotationStatement: [UInt8]?
    /// After `keys rotate`: the mailbox this account left, and when, while relays may still
    /// hold something for it (the seed as `secretsAtRest` says).
    public var previousMailboxSeed: [UInt8]?
    public var mailboxMovedAt: Int64?
    /// The device this data belongs to.
    public var deviceKey: [UInt8]
    /// A box sealed with that device's sealing key: opens only on that device and machine.
    public var deviceSeal: [UInt8]
    public var secretsAtRest: SecretsAtRest
    public var createdAt: Int64

    public init(name: String, relayAddress: String, publicKey: [UInt8], secretKey: [UInt8], inviteSalt: [UInt8],
                mailboxSeed: [UInt8], previousSecretKey: [UInt8]? = nil, rotationStatement: [UInt8]? = nil,
                previousMailboxSeed: [UInt8]? = nil, mailboxMovedAt: Int64? = nil,
                deviceKey: [UInt8], deviceSeal: [UInt8], secretsAtRest: SecretsAtRest, createdAt: Int64) {
        self.name = name
        self.relayAddress = relayAddress
        self.publicKey = publicKey
        self.secretKey = secretKey
        self.inviteSalt = inviteSalt
        self.mailboxSeed = mailboxSeed
        self.previousSecretKey = previousSecretKey
        self.rotationStatement = rotationStatement
        self.previousMailboxSeed = previousMailboxSeed
        self.mailboxMovedAt = mailboxMovedAt
        self.deviceKey = deviceKey
        self.deviceSeal = deviceSeal
        self.secretsAtRest = secretsAtRest
        self.createdAt = createdAt
    }
}

extension StoreAccess {
    /// The account, or nil before `rchat init`.
    public func account() throws -> Account? {
        guard let row = try database.queryOne(
            """
            SELECT name, relay_address, public_key, secret_key, invite_token, mailbox_seed, previous_secret_key,
                   rotation_statement, previous_mailbox_seed, mailbox_moved_at, device_key, device_seal, secrets_sealed,
                   created_at
            FROM account WHERE id = 1
            """)
        else { return nil }
        let sealed = try row.int64("secrets_sealed")
        guard let secretsAtRest = SecretsAtRest(rawValue: sealed) else {
            throw StoreError.malformedValue(table: "account", column: "secrets_sealed", detail: "unknown value \(sealed)")
        }
        return Account(name: try row.string("name"), relayAddress: try row.string("relay_address"),
                       publicKey: try row.blob("public_key"), secretKey: try row.blob("secret_key"),
                       inviteSalt: try row.blob("invite_token"), mailboxSeed: try row.blob("mailbox_seed"),
                       previousSecretKey: try row.optionalBlob("previous_secret_key"),
                       rotationStatement: try row.optionalBlob("rotation_statement"),
                       previousMailboxSeed: try row.optionalBlob("previous_mailbox_seed"),
                       mailboxMovedAt: try row.optionalInt64("mailbox_moved_at"), deviceKey: try row.blob("device_key"),
                       deviceSeal: try row.blob("device_seal"), secretsAtRest: secretsAtRest, createdAt: try row.int64("created_at"))
    }

    /// Creates the account or replaces it (import, key rotation, rename).
    public func putAccount(_ account: Account) throws {
        try database.execute("""
            INSERT INTO account (id, name, relay_address, public_key, secret_key, invite_token, mailbox_seed,
                                 previous_secret_key, rotation_statement, previous_mailbox_seed, mailbox_moved_at,
                                 device_key, device_seal, secrets_sealed, created_at)
            VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, relay_address = excluded.relay_address,
                public_key = excluded.public_key, secret_key = excluded.secret_key, invite_token = excluded.invite_token,
                mailbox_seed = excluded.mailbox_seed, previous_secret_key = excluded.previous_secret_key,
                rotation_statement = excluded.rotation_statement,
                previous_mailbox_seed = excluded.previous_mailbox_seed, mailbox_moved_at = excluded.mailbox_moved_at,
                device_key = excluded.device_key, device_seal = excluded.device_seal,
                secrets_sealed = excluded.secrets_sealed, created_at = excluded.created_at
            """, [.text(account.name), .text(account.relayAddress), .blob(account.publicKey), .blob(account.secretKey),
                  .blob(account.inviteSalt), .blob(account.mailboxSeed), SQLValue(account.previousSecretKey),
                  SQLValue(account.rotationStatement), SQLValue(account.previousMailboxSeed), SQLValue(account.mailboxMovedAt),
                  .blob(account.deviceKey), .blob(account.deviceSeal),
                  .integer(account.secretsAtRest.rawValue), .integer(account.createdAt)])
    }
}
