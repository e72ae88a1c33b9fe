import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// The drafts table: one draft per conversation, replaced in place, gone when emptied or
/// when its conversation is deleted; the table refuses what the layout does not allow.
final class StoredDraftTests: StoreTestCase {
    func testADraftIsKeptReplacedAndRemoved() throws {
        XCTAssertNil(try store.draft(contact: sam))
        try store.setDraft(Draft(text: "half a 🙂 thought", cursor: 7), contact: sam, at: 2_000)
        XCTAssertEqual(try store.draft(contact: sam), Draft(text: "half a 🙂 thought", cursor: 7))
        try store.setDraft(Draft(text: "changed", cursor: 2), contact: sam, at: 2_001)
        XCTAssertEqual(try store.draft(contact: sam), Draft(text: "changed", cursor: 2))
        XCTAssertEqual(try count("drafts"), 1, "replaced, not added")
        XCTAssertEqual(try store.database.queryOne("SELECT updated_at FROM drafts")?.int64(at: 0), 2_001)
        try store.setDraft(nil, contact: sam, at: 2_002)
        XCTAssertNil(try store.draft(contact: sam))
        XCTAssertEqual(try count("drafts"), 0)
        try store.setDraft(nil, contact: sam, at: 2_003)   // nothing to remove: no error
    }

    func testEachConversationHasItsOwn() throws {
        let alex = try store.addContact(Self.newContact("Alex", key: 9), at: 1_000).id
        try store.setDraft(Draft(text: "to Sam", cursor: 6), contact: sam, at: 2_000)
        try store.setDraft(Draft(text: "to Alex", cursor: 0), contact: alex, at: 2_000)
        XCTAssertEqual(try store.draft(contact: sam)?.text, "to Sam")
        XCTAssertEqual(try store.draft(contact: alex)?.text, "to Alex")
        XCTAssertEqual(try store.draft(contact: alex)?.cursor, 0)
    }

    func testADraftGoesWithItsConversation() throws {
        let alex = try store.addContact(Self.newContact("Alex", key: 9), at: 1_000).id
        try store.setDraft(Draft(text: "to Sam", cursor: 6), contact: sam, at: 2_000)
        try store.setDraft(Draft(text: "to Alex", cursor: 7), contact: alex, at: 2_000)
        try store.setDeleted(contact: sam, true)
        XCTAssertNil(try store.draft(contact: sam), "deleted with the conversation")
        XCTAssertEqual(try store.draft(contact: alex)?.text, "to Alex", "the others stay")
        XCTAssertThrowsError(try store.setDraft(Draft(text: "again", cursor: 0), contact: sam, at: 2_001)) { error in
            XCTAssertEqual(error as? StoreError, .unknownContact(self.sam))
        }
        XCTAssertThrowsError(try store.setDraft(Draft(text: "nobody", cursor: 0), contact: ContactID(999), at: 2_001)) { error in
            XCTAssertEqual(error as? StoreError, .unknownContact(ContactID(999)))
        }
        XCTAssertEqual(try count("drafts"), 1)
    }

    func testTooLongIsRefusedWithNothingStored() throws {
        try store.setDraft(Draft(text: "before", cursor: 6), contact: sam, at: 2_000)
        let long = String(repeating: "é", count: Draft.maximumBytes / 2 + 1)
        XCTAssertThrowsError(try store.setDraft(Draft(text: long, cursor: 0), contact: sam, at: 2_001)) { error in
            XCTAssertEqual(error as? StoreError, .draftTooLong(bytes: Draft.maximumBytes + 2, maximum: Draft.maximumBytes))
            XCTAssertTrue("\(error)".contains("shorten it"), "\(error)")
        }
        XCTAssertEqual(try store.draft(contact: sam)?.text, "before", "the draft before stays")
        let longest = String(repeating: "a", count: Draft.maximumBytes)
        try store.setDraft(Draft(text: longest, cursor: 3), contact: sam, at: 2_002)
        XCTAssertEqual(try store.draft(contact: sam)?.text.utf8.count, Draft.maximumBytes)
    }

    func testTheTableRefusesWhatTheLayoutDoesNot() throws {
        for (text, cursor) in [(SQLValue.text(""), SQLValue.integer(0)), (.text("x"), .integer(-1)),
                               (.blob([0x78]), .integer(0)), (.text("x"), .text("one"))] {
            XCTAssertThrowsError(try store.database.execute(
                "INSERT INTO drafts (conversation_id, text, cursor, updated_at) VALUES (?, ?, ?, 1)",
                [.integer(sam.rawValue), text, cursor]), "\(text) \(cursor)")
        }
        XCTAssertEqual(try count("drafts"), 0)
    }

    func testACursorPastTheEndIsClampedOnTheWayIn() throws {
        XCTAssertNil(Draft(text: "", cursor: 0), "an empty composer has no draft")
        try store.database.execute("INSERT INTO drafts (conversation_id, text, cursor, updated_at) VALUES (?, 'abc', 99, 1)",
                                   [.integer(sam.rawValue)])
        XCTAssertEqual(try store.draft(contact: sam), Draft(text: "abc", cursor: 3))
    }
}
