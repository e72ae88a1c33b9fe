import RChatCore
import RChatCrypto
import RChatNet
import RChatWire
import RChatSQL

/// A held item as persistence returns it at start.
struct PersistedItem {
    let id: HeldItemID
    let mailbox: MailboxID
    let heldAt: Int64
    let origin: DeliveryOrigin
    let payload: [UInt8]
    /// Who sent it (nil in a row written before senders were kept: not budgeted again).
    let sender: HeldSender?
}

/// `--persist FILE`: held items and invite registrations in SQLite (WAL, synchronous=FULL).
///
/// Writes are batched: the relay records changes as it goes and calls `commit()` once per
/// event-loop iteration, before any acknowledgement of that iteration leaves — one fsync
/// for a whole burst, and nothing acknowledged that is not on disk. Origin and payload are
/// sealed with a key derived from the relay's static key, bound to the row's id, mailbox
/// and time, so rows cannot be read, altered or swapped without that key. Sealed content:
/// origin kind u8 ‖ (kind 3: rendezvous code 32 | kind 2: invite token 16 | kind 4: the
/// mailbox's own cover, nothing) ‖ payload; kind 1
/// (code 32 ‖ sender mailbox 32) is still read, from files written before the relay stopped
/// recording who sent what.
final class HeldPersistence {
    private let database: Database
    private let key: SecretBytes
    private var inserts: [(id: Int64, mailbox: [UInt8], heldAt: Int64, box: [UInt8])?] = []
    private var insertIndex: [Int64: Int] = [:]
    private var deletes: [Int64] = []
    private var inviteChanges: [(token: [UInt8], mailbox: [UInt8]?, refreshed: Int64)] = []

    init(path: String, relayKey: AgreementKey) throws {
        database = try Database(path: path, fileMode: 0o600)
        try database.execute("PRAGMA journal_mode=WAL")
        try database.execute("PRAGMA synchronous=FULL")
        try database.executeScript("""
            CREATE TABLE IF NOT EXISTS held (id INTEGER PRIMARY KEY, mailbox BLOB NOT NULL, held_at INTEGER NOT NULL, box BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS invites (token BLOB PRIMARY KEY, mailbox BLOB NOT NULL, refreshed INTEGER NOT NULL DEFAULT 0);
            """)
        // A file from before invites expired: their time is unknown (0), taken as the load's.
        if try !database.query("PRAGMA table_info(invites)").contains(where: { try $0.string(at: 1) == "refreshed" }) {
            try database.execute("ALTER TABLE invites ADD COLUMN refreshed INTEGER NOT NULL DEFAULT 0")
        }
        key = Hash.deriveKey(from: relayKey.secretKey, context: "rchat relay persistence v1")
    }

    private static func binding(id: Int64, mailbox: [UInt8], heldAt: Int64) -> [UInt8] {
        var w = ByteWriter(capacity: 56)
        w.raw(Array("held".utf8)); w.u64(UInt64(bitPattern: id)); w.raw(mailbox); w.u64(UInt64(bitPattern: heldAt))
        return w.bytes
    }

    /// Drops what expired, then returns every held item oldest first, and the invites.
    func load(expiredAtOrBefore cutoff: Int64) throws -> (items: [PersistedItem], expired: Int, unreadable: Int,
                                                          invites: [(token: InviteToken, mailbox: MailboxID, refreshed: Int64)]) {
        try database.execute("DELETE FROM held WHERE held_at <= ?", [.integer(cutoff)])
        let expired = database.changes
        var items: [PersistedItem] = []
        var unreadable = 0
        for row in try database.query("SELECT id, mailbox, held_at, box FROM held ORDER BY id") {
            let id = try row.int64(at: 0), mailboxBytes = try row.blob(at: 1), heldAt = try row.int64(at: 2)
            guard let mailbox = MailboxID(bytes: mailboxBytes),
                  let plain = try? AEAD.openWithNonceInFront(try row.blob(at: 3), additionalData: Self.binding(id: id, mailbox: mailboxBytes, heldAt: heldAt), key: key),
                  let (sender, origin, payload) = Self.decodeContent(plain)
            else { unreadable += 1; continue }
            // An older row of cover was sent by the mailbox it is held for.
            let known = sender ?? (origin == .own ? HeldSender(host: nil, mailbox: mailbox) : nil)
            items.append(PersistedItem(id: HeldItemID(id), mailbox: mailbox, heldAt: heldAt, origin: origin, payload: payload, sender: known))
        }
        var invites: [(token: InviteToken, mailbox: MailboxID, refreshed: Int64)] = []
        for row in try database.query("SELECT token, mailbox, refreshed FROM invites") {
            if let t = InviteToken(bytes: try row.blob(at: 0)), let m = MailboxID(bytes: try row.blob(at: 1)) { invites.append((t, m, try row.int64(at: 2))) }
        }
        return (items, expired, unreadable, invites)
    }

    /// Kind 5: the sender (a flags byte: bit 0 a host follows, bit 1 a mailbox; then the
    /// host's 16 bytes, the mailbox's 32), then the content in one of the older kinds.
    static func encodeContent(origin: DeliveryOrigin, payload: [UInt8], sender: HeldSender? = nil) -> [UInt8] {
        var w = ByteWriter(capacity: 116 + payload.count)
        if let sender {
            w.u8(5)
            w.u8((sender.host != nil ? 1 : 0) | (sender.mailbox != nil ? 2 : 0))
            if let host = sender.host { w.u64(host.high); w.u64(host.low) }
            if let mailbox = sender.mailbox { w.raw(mailbox.bytes) }
        }
        switch origin {
        case .link(let code): w.u8(3); w.raw(code)
        case .invite(let token): w.u8(2); w.raw(token.bytes)
        case .own: w.u8(4)
        }
        w.raw(payload)
        return w.bytes
    }

    static func decodeContent(_ bytes: [UInt8]) -> (HeldSender?, DeliveryOrigin, [UInt8])? {
        var r = ByteReader(bytes)
        guard let kind = try? r.u8() else { return nil }
        if kind == 5 {
            guard let flags = try? r.u8() else { return nil }
            var host: HostAddress?, mailbox: MailboxID?
            if flags & 1 != 0 {
                guard let high = try? r.u64(), let low = try? r.u64() else { return nil }
                host = HostAddress(high: high, low: low)
            }
            if flags & 2 != 0 {
                guard let m = (try? r.raw(32)).flatMap(MailboxID.init(bytes:)) else { return nil }
                mailbox = m
            }
            guard let (origin, payload) = decodeOrigin(r.rest()) else { return nil }
            return (HeldSender(host: host, mailbox: mailbox), origin, payload)
        }
        guard let (origin, payload) = decodeOrigin(bytes) else { return nil }
        return (nil, origin, payload)
    }

    private static func decodeOrigin(_ bytes: [UInt8]) -> (DeliveryOrigin, [UInt8])? {
        var r = ByteReader(bytes)
        guard let kind = try? r.u8() else { return nil }
        switch kind {
        case 1:
            // Written before origins stopped naming the sender: its mailbox is read past.
            guard let code = try? r.raw(32), (try? r.raw(32)) != nil else { return nil }
            return (.link(code: code), r.rest())
        case 3:
            guard let code = try? r.raw(32) else { return nil }
            return (.link(code: code), r.rest())
        case 2:
            guard let token = (try? r.raw(16)).flatMap(InviteToken.init(bytes:)) else { return nil }
            return (.invite(token), r.rest())
        case 4:
            return (.own, r.rest())
        default:
            return nil
        }
    }

    // MARK: changes, written at the next commit

    func recordHeld(id: HeldItemID, mailbox: MailboxID, heldAt: Int64, origin: DeliveryOrigin, payload: [UInt8], sender: HeldSender? = nil) {
        let rowID = Int64(bitPattern: id)
        let box = AEAD.sealWithRandomNonce(Self.encodeContent(origin: origin, payload: payload, sender: sender),
                                           additionalData: Self.binding(id: rowID, mailbox: mailbox.bytes, heldAt: heldAt), key: key)
        insertIndex[rowID] = inserts.count
        inserts.append((rowID, mailbox.bytes, heldAt, box))
    }

    func recordDeleted(id: HeldItemID) {
        let rowID = Int64(bitPattern: id)
        // Held and handed over within one iteration: it never needs to touch the disk.
        if let i = insertIndex.removeValue(forKey: rowID) { inserts[i] = nil; return }
        deletes.append(rowID)
    }

    func recordInvite(_ token: InviteToken, mailbox: MailboxID?, refreshed: Int64) {
        inviteChanges.append((token.bytes, mailbox?.bytes, refreshed))
    }

    var hasChanges: Bool { !inserts.isEmpty || !deletes.isEmpty || !inviteChanges.isEmpty }

    func commit() throws {
        guard hasChanges else { return }
        try database.transaction {
            for case let row? in inserts {
                try database.execute("INSERT INTO held (id, mailbox, held_at, box) VALUES (?, ?, ?, ?)",
                                     [.integer(row.id), .blob(row.mailbox), .integer(row.heldAt), .blob(row.box)])
            }
            for id in deletes { try database.execute("DELETE FROM held WHERE id = ?", [.integer(id)]) }
            for change in inviteChanges {
                if let mailbox = change.mailbox {
                    try database.execute("INSERT OR REPLACE INTO invites (token, mailbox, refreshed) VALUES (?, ?, ?)",
                                         [.blob(change.token), .blob(mailbox), .integer(change.refreshed)])
                } else {
                    try database.execute("DELETE FROM invites WHERE token = ?", [.blob(change.token)])
                }
            }
        }
        inserts.removeAll(keepingCapacity: true)
        insertIndex.removeAll(keepingCapacity: true)
        deletes.removeAll(keepingCapacity: true)
        inviteChanges.removeAll(keepingCapacity: true)
    }

    func expire(heldAtOrBefore cutoff: Int64) throws {
        try commit()
        try database.execute("DELETE FROM held WHERE held_at <= ?", [.integer(cutoff)])
    }

    func close() { database.close() }
}
