import Foundation
import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

/// A message to a group has a delivery per member: a status, a timeline, an outbox entry and
/// resend facts each, raised one at a time by compare-and-set; what the message shows is the
/// lowest over current members (`DeliverySummary`). Delivered receipts are owed per
/// (conversation, author).
final class DeliveryTests: StoreTestCase {
    var alex: ContactID!
    var kim: ContactID!
    var group: ConversationID!

    override func setUpWithError() throws {
        try super.setUpWithError()
        alex = try store.addContact(Self.newContact("Alex", key: 9), at: 1_000).id
        kim = try store.addContact(Self.newContact("Kim", key: 20), at: 1_000).id
        group = try store.createGroup(members: [sam, alex, kim], admins: [sam], at: 1_500)
    }

    func key(_ row: MessageRowID, _ member: ContactID) -> DeliveryKey { DeliveryKey(message: row, member: member) }

    func status(_ row: MessageRowID, _ member: ContactID) throws -> MessageStatus? {
        try store.deliveries(message: row).first { $0.member == member }?.status
    }

    func testAGroupIsAConversationOfItsOwnBesideEachMembersDirectOne() throws {
        XCTAssertLessThan(group.rawValue, 0, "no contact's id")
        let stored = try XCTUnwrap(store.storedConversation(group))
        XCTAssertEqual(stored.kind, .group)
        XCTAssertEqual(stored.members.map(\.contact), [sam, alex, kim].sorted())
        XCTAssertEqual(stored.members.first { $0.contact == sam }?.role, .admin)
        XCTAssertEqual(try store.createGroup(members: [alex], at: 1_600).rawValue, group.rawValue - 1)
        // A contact added afterwards still has its direct conversation, with its own id.
        let lee = try store.addContact(Self.newContact("Lee", key: 30), at: 1_700).id
        XCTAssertEqual(try store.storedConversation(lee.conversation)?.members.map(\.contact), [lee])
        XCTAssertThrowsError(try store.createGroup(members: [ContactID(404)], at: 1_800)) {
            XCTAssertEqual($0 as? StoreError, .unknownContact(ContactID(404)))
        }
    }

    func testAMessageToAGroupHasADeliveryPerMemberEachInTheOutbox() throws {
        let row = try store.insertOutgoing(conversation: group, id: .random(), content: .text("hello all"), at: 2_000,
                                           keysFingerprints: [sam: [1], alex: [2]])
        let deliveries = try store.deliveries(message: row)
        XCTAssertEqual(deliveries.map(\.member), [sam, alex, kim].sorted())
        XCTAssertTrue(deliveries.allSatisfy { $0.status == .sending && $0.isCurrent && !$0.isResent })
        XCTAssertEqual(deliveries.first { $0.member == alex }?.keysFingerprint, [2])
        XCTAssertNil(deliveries.first { $0.member == kim }?.keysFingerprint)
        for member in [sam, alex, kim] {
            XCTAssertEqual(try store.outbox(contact: member!).map(\.delivery), [key(row, member!)], "queued for \(member!)'s channel")
            XCTAssertEqual(try store.statusLog(key(row, member!)).map(\.status), [.sending])
        }
        XCTAssertEqual(try store.message(row)?.status, .sending)
        XCTAssertEqual(try store.message(row)?.conversation, group)
        XCTAssertEqual(try store.conversation(group, limit: 10).count, 1)
        XCTAssertEqual(try store.conversation(contact: sam, limit: 10).count, 0, "not in Sam's direct conversation")
    }

    /// For every status the other delivery may be in and every event raised on this one: the
    /// other's status, timeline and outbox entry stay exactly as they were.
    func testADeliverysRaiseNeverTouchesAnotherDeliveryOfTheSameMessage() throws {
        for other in MessageStatus.allCases {
            for event in StatusEvent.allCases {
                let id = MessageID.random()
                let row = try store.insertOutgoing(conversation: group, id: id, content: .text("x"), at: 2_000)
                // Alex's delivery put in `other` by a raw write (allowed from Sending), as a run would have left it.
                try store.database.execute("UPDATE message_status SET status = ? WHERE message_rowid = ? AND member_id = ?",
                                           [.text(other.rawValue), .integer(row.rawValue), .integer(alex.rawValue)])
                let alexLog = try store.statusLog(key(row, alex))
                let alexQueued = try store.outboxItem(key(row, alex))
                let kimBefore = try status(row, kim)

                let change = try XCTUnwrap(store.raiseDelivery(conversation: group, member: sam, id: id, event: event, at: 3_000))
                XCTAssertEqual(change.delivery, key(row, sam))
                XCTAssertEqual(change.current, StatusLattice.raise(.sending, event), "\(event)")
                XCTAssertEqual(try status(row, sam), change.current)
                XCTAssertEqual(try status(row, alex), other, "\(other), \(event) on Sam's: Alex's left alone")
                XCTAssertEqual(try status(row, kim), kimBefore)
                XCTAssertEqual(try store.statusLog(key(row, alex)), alexLog, "\(other), \(event)")
                XCTAssertEqual(try store.outboxItem(key(row, alex)), alexQueued)

                // The batch path (a receipt frame, a relay's acknowledgements) keeps to its deliveries as well.
                _ = try store.raiseDeliveries(conversation: group, member: kim, ids: [id], event: event, at: 3_001)
                _ = try store.raiseDeliveries([key(row, sam)], event: event, at: 3_002)
                XCTAssertEqual(try status(row, alex), other, "\(other), \(event) in batches: Alex's left alone")
                XCTAssertEqual(try store.statusLog(key(row, alex)), alexLog)
                XCTAssertEqual(try status(row, kim), StatusLattice.raise(.sending, event))
            }
        }
    }

    func testTheMessageShowsTheLowestOverCurrentMembersWithCountsAndNeverRoundsUp() throws {
        let id = MessageID.random()
        let row = try store.insertOutgoing(conversation: group, id: id, content: .text("x"), at: 2_000)
        _ = try store.raiseDeliveries([key(row, sam), key(row, alex), key(row, kim)], event: .relayAcknowledged, at: 2_001)
        XCTAssertEqual(try store.message(row)?.status, .sent)
        XCTAssertEqual(try store.outbox(contact: sam), [], "the relay took Sam's copy")
        _ = try store.raiseDeliveries(conversation: group, member: sam, ids: [id], event: .readReceipt, at: 2_002)
        _ = try store.raiseDeliveries(conversation: group, member: alex, ids: [id], event: .deliveredReceipt, at: 2_003)
        XCTAssertEqual(try store.message(row)?.status, .sent, "Kim has not stored it: not Delivered")
        XCTAssertEqual(try store.deliverySummary(message: row).counts, [.read: 1, .delivered: 1, .sent: 1])
        _ = try store.raiseDeliveries(conversation: group, member: kim, ids: [id], event: .deliveredReceipt, at: 2_004)
        XCTAssertEqual(try store.message(row)?.status, .delivered, "every member stored it")
        // Kim leaves: what Kim has no longer counts; a later message has no delivery to Kim.
        _ = try store.raiseDeliveries(conversation: group, member: alex, ids: [id], event: .readReceipt, at: 2_005)
        XCTAssertEqual(try store.message(row)?.status, .delivered)
        try store.setMemberState(.left, conversation: group, member: kim)
        XCTAssertEqual(try store.message(row)?.status, .read, "Read by every current member")
        XCTAssertEqual(try store.deliverySummary(message: row).total, 2)
        let later = try store.insertOutgoing(conversation: group, id: .random(), content: .text("after Kim left"), at: 2_006)
        XCTAssertEqual(try store.deliveries(message: later).map(\.member), [sam, alex].sorted())
        XCTAssertEqual(try store.outbox(contact: kim), [])
    }

    /// Resend and its facts are a delivery's: Sam's copy goes again, Alex's (Delivered) stays, and
    /// `ResendPolicy` decides each from its own delivery.
    func testResendIsPerDeliveryAndResendPolicyDecidesEachFromItsOwnFacts() throws {
        let id = MessageID.random()
        let row = try store.insertOutgoing(conversation: group, id: id, content: .text("x"), at: 2_000,
                                           keysFingerprints: [sam: [1], alex: [2], kim: [3]])
        _ = try store.raiseDeliveries([key(row, sam), key(row, alex), key(row, kim)], event: .relayAcknowledged, at: 2_001)
        _ = try store.raiseDeliveries(conversation: group, member: alex, ids: [id], event: .deliveredReceipt, at: 2_002)
        _ = try store.raiseDeliveries(conversation: group, member: sam, ids: [id], event: .peerCouldNotRead, at: 2_003)
        let change = try XCTUnwrap(store.queueResend(conversation: group, member: sam, id: id, automatically: true, at: 2_004))
        XCTAssertEqual(change.current, .sending)
        let deliveries = Dictionary(uniqueKeysWithValues: try store.deliveries(message: row).map { ($0.member, $0) })
        XCTAssertEqual(deliveries[sam]?.autoResentAt, 2_004)
        XCTAssertNil(deliveries[alex]?.autoResentAt)
        XCTAssertFalse(deliveries[kim]!.isResent)
        XCTAssertEqual(try store.outbox(contact: sam).map(\.delivery), [key(row, sam)])
        XCTAssertEqual(try store.outbox(contact: alex), [])
        XCTAssertEqual(try store.autoResentCount(contact: sam, since: 0), 1)
        XCTAssertEqual(try store.autoResentCount(contact: alex, since: 0), 0)
        XCTAssertEqual(try store.queueResend(conversation: group, member: alex, id: id, automatically: true, at: 2_005)?.current, .delivered,
                       "Alex's copy arrived: it stays Delivered")
        XCTAssertEqual(try store.outbox(contact: alex), [])

        let decisions = [alex!, kim!].map { member -> ResendPolicy.Decision in
            let d = deliveries[member]!
            return ResendPolicy.decide(ResendPolicy.Facts(signer: .pinnedDevice, keysUnchangedSinceSent: d.keysFingerprint == [3],
                                                          sentAt: 2_000, status: d.status, autoResentBefore: d.autoResentAt != nil),
                                       now: 2_010, autoResentInLastDay: 0)
        }
        XCTAssertEqual(decisions, [.keep, .resendAutomatically])
    }

    func testDeliveredReceiptsAreOwedPerConversationAndAuthor() throws {
        let fromSam = try store.insertIncoming(conversation: group, author: sam, [IncomingMessage(id: .random(), content: .text("s"), sentAt: 1, seq: 1)], at: 2_000)
        let fromAlex = try store.insertIncoming(conversation: group, author: alex, [IncomingMessage(id: .random(), content: .text("a"), sentAt: 1, seq: 1)], at: 2_001)
        try store.insertIncoming(contact: sam, id: .random(), content: .text("direct"), at: 2_002)
        XCTAssertEqual(try store.message(fromSam[0].row)?.author, sam)
        XCTAssertEqual(try store.deliveredReceiptsOwed(conversation: group, author: sam, after: nil, limit: 10), fromSam.map(\.owed))
        XCTAssertEqual(try store.deliveredReceiptsOwed(conversation: group, author: alex, after: nil, limit: 10), fromAlex.map(\.owed))
        XCTAssertEqual(try store.deliveredReceiptsOwed(conversation: group, author: kim, after: nil, limit: 10), [])
        XCTAssertEqual(try store.deliveredReceiptsOwed(contact: sam, after: nil, limit: 10).count, 1, "Sam's direct conversation apart")
        try store.settleDeliveredReceipts(conversation: group, author: sam, through: fromSam[0].position)
        XCTAssertEqual(try store.deliveredReceiptsOwed(conversation: group, author: sam, after: nil, limit: 10), [])
        XCTAssertEqual(try store.deliveredReceiptsOwed(conversation: group, author: alex, after: nil, limit: 10), fromAlex.map(\.owed),
                       "Alex's mark did not move")
        XCTAssertEqual(try store.deliveredReceiptedThrough(contact: sam), 0)
        let owed = try store.receiptsOwed().map { "\($0.conversation.rawValue)/\($0.author.rawValue)" }
        XCTAssertEqual(Set(owed), ["\(group.rawValue)/\(alex.rawValue)", "\(sam.rawValue)/\(sam.rawValue)"])
        XCTAssertEqual(try store.contactsOwedReceipts(), [sam])
        // Read receipts go to the message's author.
        try store.oweReadReceipts(conversation: group, ids: [fromSam[0].id, fromAlex[0].id])
        XCTAssertEqual(try store.readReceiptsOwed(conversation: group, author: alex, limit: 10), [fromAlex[0].id])
    }
}
