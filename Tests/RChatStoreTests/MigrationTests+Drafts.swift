import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// A store written by the schema before drafts, opened by this code: the drafts table is
/// there and empty, everything else is as it was, and drafts work from the first write.
extension MigrationTests {
    /// The steps before the one that added drafts (wherever it sits).
    static let stepsBeforeDrafts = Array(Migrations.all.prefix { $0.sql != SchemaDrafts.sql })

    func testAStoreFromBeforeDraftsOpensWithAnEmptyDraftsTableAndEverythingElse() throws {
        XCTAssertLessThan(Self.stepsBeforeDrafts.count, Migrations.all.count, "the drafts step is one of the steps")
        let old = try Store(path: path, migrations: Self.stepsBeforeDrafts)
        XCTAssertNil(try old.database.queryOne("SELECT 1 FROM sqlite_master WHERE name = 'drafts'"))
        let sam = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Sam"), at: 1_000)
        let gone = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Gone", key: 9), at: 1_000)
        let sent = try StoreTestCase.insertAsBefore(old.database, contact: sam, .outgoing, .text("sent before drafts"), at: 2_000, position: 1)
        // Read as rows: today's queries name columns later steps add.
        func rows(_ db: Database) throws -> [[UInt8]] {
            try db.query("SELECT id, content, position FROM messages ORDER BY position").map { try $0.blob("id") + $0.blob("content") }
        }
        let before = try rows(old.database)
        old.close()

        let store = try Store(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.database.userVersion, Store.schemaVersion)
        XCTAssertEqual(try store.database.queryOne("SELECT count(*) FROM drafts")?.int64(at: 0), 0)
        XCTAssertEqual(try rows(store.database), before, "the conversation as it was")
        XCTAssertEqual(try store.conversation(contact: sam, limit: 10).count, 1)
        XCTAssertEqual(try store.message(sent)?.content, .text("sent before drafts"))
        XCTAssertEqual(try store.contacts().map(\.name), ["Gone", "Sam"])

        try store.setDraft(Draft(text: "after the step", cursor: 5), contact: sam, at: 3_000)
        try store.setDraft(Draft(text: "to be deleted", cursor: 0), contact: gone, at: 3_000)
        XCTAssertEqual(try store.draft(contact: sam), Draft(text: "after the step", cursor: 5))
        try store.setDeleted(contact: gone, true)
        XCTAssertNil(try store.draft(contact: gone), "the trigger came with the step")
        XCTAssertNil(try store.database.queryOne("PRAGMA foreign_key_check"))
    }

    func testTheMigratedSchemaIsTheOneAFreshStoreHas() throws {
        try Store(path: path, migrations: Self.stepsBeforeDrafts).close()
        let migrated = try Store(path: path)
        let schema = try migrated.database.query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").map(\.values)
        migrated.close()
        let fresh = try Store(path: home.appendingPathComponent("fresh.db").path)
        defer { fresh.close() }
        XCTAssertEqual(try fresh.database.query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").map(\.values), schema)
    }
}
