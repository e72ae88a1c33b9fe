import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// A store whose outbox was written before it recorded who asked (`SendPolicy.Origin`): what
/// the user wrote counts as asked for where it was written, an automatic resend as nothing.
extension MigrationTests {
    func testAnOutboxFromBeforeTheOriginCountsWhatTheUserWroteWhereItWasWritten() throws {
        let steps = Array(Migrations.all.prefix { !$0.sql.contains("asked_at_position") })
        XCTAssertEqual(steps.count, 11, "the origin is step 12")
        let old = try Store(path: path, migrations: steps)
        let sam = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Sam"), at: 1_000)
        let written = MessageID.random(), resent = MessageID.random()
        for (n, id) in [written, resent].enumerated() {
            let row = try StoreTestCase.insertAsBefore(old.database, contact: sam, id: id, .outgoing, .text("queued \(n)"),
                                                       at: 2_000, position: Int64(n + 4))
            try old.database.execute("INSERT INTO outbox (message_rowid, next_attempt_at) VALUES (?, 2000)", [.integer(row.rawValue)])
            if id == resent { try old.database.execute("UPDATE messages SET auto_resent_at = 2100 WHERE rowid = ?", [.integer(row.rawValue)]) }
        }
        old.close()

        let store = try Store(path: path)
        defer { store.close() }
        let origins = Dictionary(uniqueKeysWithValues: try store.outbox(contact: sam).map { ($0.id, $0.origin) })
        XCTAssertEqual(origins, [written: .byHand(askedAt: 4), resent: .automatic])
    }
}
