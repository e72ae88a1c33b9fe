import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// A store of schema version 18 opened by this code (step 19, `SchemaGroupHeads`): a group
/// held before it has no heads yet (its messages carry none until its log changes), and a
/// group message waiting since then gets a head count of 0 in its body, so it is read as a
/// message carrying no heads — judged by the roster as before.
final class GroupHeadsMigrationTests: MigrationTestCase {
    static let before = Array(Migrations.all.prefix { $0.sql != SchemaGroupHeads.sql })

    func testAWaitingMessageKeepsItsContentAndCarriesNoHeads() throws {
        let old = try Store(path: path, migrations: Self.before)
        XCTAssertEqual(try old.database.userVersion, 18)
        let sam = try StoreTestCase.addContactAsBefore(old, StoreTestCase.newContact("Sam"), at: 1_000)
        let groupID = [UInt8](repeating: 7, count: 32), other = [UInt8](repeating: 0xFF, count: 31) + [0x80]   // no text
        try old.database.execute("INSERT INTO conversations (id, kind, created_at) VALUES (-1, 'group', 1000)")
        try old.database.execute("INSERT INTO groups (conversation_id, group_id, name, created_at) VALUES (-1, ?, 'Friends', 1000)",
                                 [.blob(groupID)])
        let content = MessageContent.text("kept while away").encoded()
        let oldBody = other + [0, 0, 0, 60] + content   // group id, timer, content: as step 18 kept it
        try old.database.execute("""
            INSERT INTO group_messages_waiting (author_id, message_id, group_id, body, seq, sent_at, received_at)
            VALUES (?, ?, ?, ?, 4, 1500, 1600)
            """, [.integer(sam.rawValue), .blob(MessageID(high: 1, low: 2).bytes), .blob(other), .blob(oldBody)])
        old.close()

        let store = try Store(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.database.userVersion, Store.schemaVersion)
        XCTAssertEqual(try store.group(ConversationID(-1))?.heads, [], "no heads until its log changes")
        let waiting = try store.takeWaiting(group: other, cutoff: 0)
        XCTAssertEqual(waiting.map(\.body), [other + [0, 0, 0, 60] + [0] + content], "a count of 0 heads after the timer")
        XCTAssertEqual(waiting.map(\.seq), [4])
        XCTAssertEqual(waiting.map(\.sentAt), [1500])
        XCTAssertEqual(try store.waitingGroupMessages(), 0)
    }

    /// What waits on is only what the judge does not take; what waited past the cutoff goes.
    func testTakingWaitingMessagesLeavesTheRestWaiting() throws {
        let store = try Store(path: path)
        defer { store.close() }
        let sam = try store.addContact(StoreTestCase.newContact("Sam"), at: 1_000).id
        let group = [UInt8](repeating: 7, count: 32)
        for (n, at) in [(1, 100), (2, 5_000), (3, 6_000)] as [(UInt64, Int64)] {
            let kept = try store.keepWaiting(WaitingGroupMessage(author: sam, id: MessageID(high: 1, low: n), body: group + [0, 0, 0, 0, 0, UInt8(n)],
                                                                 seq: Int64(n), sentAt: at), group: group, at: at, cutoff: 0, limit: 10)
            XCTAssertTrue(kept)
        }
        let taken = try store.takeWaiting(group: group, cutoff: 1_000) { $0.id.low == 3 }
        XCTAssertEqual(taken.map(\.id.low), [3])
        XCTAssertEqual(try store.waitingGroupMessages(), 1, "2 waits on; 1 waited past the cutoff and is gone")
        XCTAssertEqual(try store.takeWaiting(group: group, cutoff: 1_000).map(\.id.low), [2])
    }
}
