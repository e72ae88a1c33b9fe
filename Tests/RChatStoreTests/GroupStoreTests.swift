import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// Groups as the store keeps them (schema step 16): a group by its log's id, its changes as
/// received, the roster it folds to in `conversation_members`, and people known only from a
/// group (`Contact.Kind.member`): a channel's row with no one-to-one conversation, never
/// listed, never taking a contact's name.
final class GroupStoreTests: StoreTestCase {
    private let groupID = [UInt8](repeating: 0xab, count: 32)

    func testAGroupIsFoundByItsIdAndByItsNameOnce() throws {
        let friends = try store.insertGroup(groupID: groupID, name: "Friends", at: 2_000)
        XCTAssertLessThan(friends.rawValue, 0)
        XCTAssertEqual(try store.group(id: groupID)?.conversation, friends)
        XCTAssertEqual(try store.group(friends)?.name, "Friends")
        XCTAssertEqual(try store.group(friends)?.state, .current)
        XCTAssertEqual(try store.storedConversation(friends)?.kind, .group)
        XCTAssertEqual(try store.groups(named: "FRIENDS").map(\.conversation), [friends], "names compare as contact names do")
        XCTAssertThrowsError(try store.insertGroup(groupID: groupID, name: "Again", at: 2_001)) {
            XCTAssertEqual($0 as? StoreError, .groupExists)
        }
        let other = try store.insertGroup(groupID: [UInt8](repeating: 1, count: 32), name: "friends", at: 2_002)
        XCTAssertEqual(try store.groups(named: "Friends").map(\.conversation), [friends, other], "two of one name: oldest first")
        XCTAssertThrowsError(try store.insertGroup(groupID: [1], name: "Short", at: 2_003), "a group id is 32 bytes")
    }

    func testTheLogKeepsEachChangeOnceAndWhetherItWasTaken() throws {
        let friends = try store.insertGroup(groupID: groupID, name: "Friends", at: 2_000)
        try store.storeGroupChange(friends, id: groupID, bytes: [1, 2, 3], taken: true, at: 2_000)
        let waiting = [UInt8](repeating: 0xcd, count: 32)
        try store.storeGroupChange(friends, id: waiting, bytes: [4, 5], taken: false, at: 2_001)
        XCTAssertEqual(try store.groupChanges(friends).map(\.taken), [true, false])
        try store.storeGroupChange(friends, id: waiting, bytes: [4, 5], taken: true, at: 2_002)
        XCTAssertEqual(try store.groupChanges(friends), [StoredGroupChange(id: groupID, bytes: [1, 2, 3], taken: true),
                                                         StoredGroupChange(id: waiting, bytes: [4, 5], taken: true)])
        XCTAssertThrowsError(try store.storeGroupChange(ConversationID(-99), id: waiting, bytes: [1], taken: true, at: 1))
    }

    func testTheRosterIsWhatTheLogFoldsTo() throws {
        let friends = try store.insertGroup(groupID: groupID, name: "Friends", at: 2_000)
        let alex = try store.addContact(Self.newContact("Alex", key: 7), at: 1_000).id
        try store.setRoster(friends, name: "Friends", selfState: .current, heads: [], members: [sam: .admin, alex: .member], gone: [:])
        XCTAssertEqual(try store.currentMembers(friends), [sam, alex])
        XCTAssertEqual(try store.members(friends).map(\.role), [.admin, .member])
        XCTAssertEqual(try store.group(friends)?.heads, [])
        let heads = [UInt8](repeating: 3, count: 32) + [UInt8](repeating: 4, count: 32)
        try store.setRoster(friends, name: "Climbing", selfState: .current, heads: heads, members: [sam: .admin], gone: [alex: .removed])
        XCTAssertEqual(try store.group(friends)?.heads, heads, "the log's heads are kept with the roster they fold to")
        XCTAssertEqual(try store.currentMembers(friends), [sam], "nothing more is written to a removed member")
        XCTAssertEqual(try store.members(friends).last?.state, .removed)
        XCTAssertEqual(try store.group(friends)?.name, "Climbing")
        try store.setRoster(friends, name: "Climbing", selfState: .removed, heads: [], members: [:], gone: [sam: .left])
        XCTAssertEqual(try store.group(friends)?.state, .removed)
        XCTAssertEqual(try store.currentMembers(friends), [])
        XCTAssertThrowsError(try store.setRoster(ConversationID(-99), name: "X", selfState: .current, heads: [], members: [:], gone: [:]))
    }

    func testAPersonKnownOnlyFromAGroupHasNoConversationAndNoName() throws {
        var new = Self.newContact("Sam", key: 9)
        new.kind = .member
        new.code = "rchat-2-code"
        let dave = try store.addContact(new, at: 3_000)
        XCTAssertEqual(dave.kind, .member)
        XCTAssertEqual(dave.code, "rchat-2-code")
        XCTAssertEqual(dave.name, "Sam", "named as their code names them, beside a contact of that name")
        XCTAssertNil(try store.storedConversation(dave.id.conversation), "no one-to-one conversation")
        XCTAssertEqual(try store.contacts().map(\.id), [sam], "not in the contact list")
        XCTAssertEqual(try store.contacts(includingMembers: true).map(\.id).sorted(), [sam, dave.id])
        XCTAssertEqual(try store.contact(named: "Sam")?.id, sam)
        XCTAssertEqual(try store.contact(accountKey: dave.accountKey)?.id, dave.id, "found by the key a group names them by")

        XCTAssertThrowsError(try store.makeContact(member: dave.id, name: "Sam", at: 3_100)) {
            XCTAssertEqual($0 as? StoreError, .contactNameTaken("Sam"))
        }
        XCTAssertEqual(try store.contact(id: dave.id)?.kind, .member, "nothing changed")
        try store.makeContact(member: dave.id, name: "Dave", at: 3_100)
        XCTAssertEqual(try store.contact(named: "dave")?.kind, .contact)
        XCTAssertEqual(try store.storedConversation(dave.id.conversation)?.currentMembers, [dave.id])
        XCTAssertThrowsError(try store.makeContact(member: dave.id, name: "Dave", at: 3_200), "a contact already")
    }

    /// A group's messages kept before the group is held (schema step 18): bounded per author,
    /// none older than the cutoff, a copy kept once, taken away in the order they came.
    func testMessagesWaitingForAGroupAreBoundedAndTakenInOrder() throws {
        let alex = try store.addContact(Self.newContact("Alex", key: 9), at: 1_000).id
        func message(_ n: UInt64, from author: ContactID) -> WaitingGroupMessage {
            WaitingGroupMessage(author: author, id: MessageID(high: 5, low: n), body: groupID + [0, 0, 0, 0] + MessageContent.text("m\(n)").encoded(),
                                seq: Int64(n), sentAt: 1_000 + Int64(n))
        }
        for n: UInt64 in 1...3 { XCTAssertTrue(try store.keepWaiting(message(n, from: sam), group: groupID, at: 2_000 + Int64(n), cutoff: 0, limit: 3)) }
        XCTAssertFalse(try store.keepWaiting(message(4, from: sam), group: groupID, at: 2_010, cutoff: 0, limit: 3), "at the bound: dropped")
        XCTAssertTrue(try store.keepWaiting(message(5, from: alex), group: groupID, at: 2_011, cutoff: 0, limit: 3), "another author's own bound")
        XCTAssertTrue(try store.keepWaiting(message(6, from: alex), group: [UInt8](repeating: 7, count: 32), at: 2_012, cutoff: 0, limit: 3))
        XCTAssertEqual(try store.waitingGroupMessages(), 5)
        // What waited since before the cutoff goes first: room again for Sam.
        XCTAssertTrue(try store.keepWaiting(message(7, from: sam), group: groupID, at: 2_020, cutoff: 2_002, limit: 3))
        XCTAssertTrue(try store.keepWaiting(message(7, from: sam), group: groupID, at: 2_021, cutoff: 2_002, limit: 3), "a copy: kept once")
        let taken = try store.takeWaiting(group: groupID, cutoff: 2_002)
        XCTAssertEqual(taken.map(\.id.low), [2, 3, 5, 7])
        XCTAssertEqual(taken.first?.body, message(2, from: sam).body)
        XCTAssertEqual(taken.first?.sentAt, 1_002)
        XCTAssertEqual(try store.takeWaiting(group: groupID, cutoff: 0), [], "taken away")
        XCTAssertEqual(try store.waitingGroupMessages(), 1, "another group's stays")
    }
}
