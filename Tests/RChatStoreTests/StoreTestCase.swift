import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// A fresh home directory (0700) with an open store and one contact, removed afterwards.
class StoreTestCase: XCTestCase {
    var home: URL!
    var store: Store!
    var sam: ContactID!

    var dbPath: String { home.appendingPathComponent(Store.fileName).path }

    override func setUpWithError() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        store = try Store(home: home.path)
        sam = try store.addContact(Self.newContact("Sam"), at: 1_000).id
    }

    override func tearDown() {
        store?.close()
        try? FileManager.default.removeItem(at: home)
    }

    static func newContact(_ name: String, key: UInt8 = 1) -> NewContact {
        NewContact(name: name, accountKey: [UInt8](repeating: key, count: 32), deviceKey: [UInt8](repeating: key &+ 1, count: 32),
                   deviceCertificate: [UInt8](repeating: key &+ 2, count: 64), relayAddress: "127.0.0.1:7000/relaykey")
    }

    /// A contact as a store made by an earlier schema step holds it: the row its code wrote
    /// (the columns of schema step 1), for stores opened by `Store(path:migrations:)` with fewer steps.
    static func addContactAsBefore(_ store: Store, _ new: NewContact, at now: Int64) throws -> ContactID {
        try store.database.execute("""
            INSERT INTO contacts (name, name_key, account_key, device_key, device_certificate, relay_address, invite_token, state,
                                  keys_changed_at, added_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(new.name), .text(Contact.nameKey(new.name)), .blob(new.accountKey), .blob(new.deviceKey),
                  .blob(new.deviceCertificate), SQLValue(new.relayAddress), SQLValue(new.inviteToken), .text(new.state.rawValue),
                  .integer(now), .integer(now)])
        return ContactID(store.database.lastInsertRowID)
    }

    /// A message as a store made by an earlier schema step holds it: the row (and an outgoing
    /// one's status) written as that code wrote them, with nothing a later step adds (the
    /// search index entry): for stores opened by `Store(path:migrations:)` with fewer steps.
    @discardableResult
    static func insertAsBefore(_ db: Database, contact: ContactID, id: MessageID = .random(), _ direction: Direction,
                               _ content: MessageContent, at: Int64, position: Int64) throws -> MessageRowID {
        try db.execute("""
            INSERT INTO messages (contact_id, id, direction, content, created_at, position) VALUES (?, ?, ?, ?, ?, ?)
            """, [.integer(contact.rawValue), .blob(id.bytes), .text(direction.rawValue), .blob(content.encoded()), .integer(at),
                  .integer(position)])
        let row = MessageRowID(db.lastInsertRowID)
        if direction == .outgoing {
            try db.execute("INSERT INTO message_status (message_rowid, status) VALUES (?, 'Sending')", [.integer(row.rawValue)])
        }
        return row
    }

    func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    func mode(_ path: String) throws -> Int {
        try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    func count(_ table: String) throws -> Int64 {
        try XCTUnwrap(store.database.queryOne("SELECT count(*) FROM \(table)")?.int64(at: 0))
    }

    /// Puts an outgoing message in `status` by a raw write (allowed from Sending).
    func outgoing(in status: MessageStatus, id: MessageID = .random()) throws -> MessageRowID {
        let row = try store.insertOutgoing(contact: sam, id: id, content: .text("hello"), at: 2_000)
        try store.database.execute("UPDATE message_status SET status = ? WHERE message_rowid = ?", [.text(status.rawValue), .integer(row.rawValue)])
        return row
    }
}
