import RChatCore
import XCTest
@testable import RChatStore

/// A row's Resend is withdrawn once nothing of it is left to resend, and only then.
final class ResendOfferTests: StoreTestCase {
    /// An outgoing message the relay took (Sent), written at `at`.
    private func sent(_ text: String, at: Int64) throws -> MessageID {
        let id = MessageID.random()
        let row = try store.insertOutgoing(contact: sam, id: id, content: .text(text), at: at)
        _ = try store.raiseStatuses(messages: [row], event: .relayAcknowledged, at: at)
        return id
    }

    private func offer(_ ids: [MessageID], at: Int64) throws -> Int64 {
        try store.addSystemRow(contact: sam, kind: .keysChanged, text: "Sam's keys changed: \(ids.count) messages may not have arrived.",
                               action: .resend, messageIDs: ids, at: at).id
    }

    func testARowLosesItsResendOnceEachMessageWasResentOrDelivered() throws {
        let a = try sent("a", at: 100), b = try sent("b", at: 101), c = try sent("c", at: 102)
        let row = try offer([a, b], at: 200)
        let other = try offer([c], at: 200)

        try store.queueResend(contact: sam, id: a, automatically: false, at: 210)
        XCTAssertEqual(try store.systemRow(id: row)?.action, .resend, "b is still owed a Resend")
        // The resent copy goes out again: Sent, not yet proven.
        _ = try store.raiseStatuses(messages: [XCTUnwrap(store.message(contact: sam, id: a)?.rowID)], event: .relayAcknowledged, at: 211)
        XCTAssertEqual(try store.systemRow(id: row)?.action, .resend)

        _ = try store.raiseStatuses(contact: sam, ids: [b], event: .deliveredReceipt, at: 220)
        let withdrawn = try XCTUnwrap(store.systemRow(id: row))
        XCTAssertNil(withdrawn.action, "a was resent and b delivered: nothing left to resend")
        XCTAssertEqual(withdrawn.text, "Sam's keys changed: 2 messages may not have arrived.")
        XCTAssertEqual(withdrawn.messageIDs, [a, b])
        XCTAssertEqual(try store.systemRow(id: other)?.action, .resend, "a row about other messages keeps its offer")
        XCTAssertEqual(try store.idsOfferedForResend(contact: sam), [c])

        _ = try store.raiseStatuses(contact: sam, ids: [c], event: .readReceipt, at: 230)
        XCTAssertNil(try store.systemRow(id: other)?.action)
        XCTAssertEqual(try store.idsOfferedForResend(contact: sam), [])
    }

    func testAResendBeforeTheRowOrALaterNotDeliveredStillOwesOne() throws {
        let a = try sent("a", at: 100), b = try sent("b", at: 101)
        // a was resent before the row was added: that copy is what may not have arrived.
        try store.queueResend(contact: sam, id: a, automatically: false, at: 150)
        _ = try store.raiseStatuses(messages: [XCTUnwrap(store.message(contact: sam, id: a)?.rowID)], event: .relayAcknowledged, at: 151)
        let row = try offer([a, b], at: 200)
        _ = try store.raiseStatuses(contact: sam, ids: [b], event: .deliveredReceipt, at: 210)
        XCTAssertEqual(try store.systemRow(id: row)?.action, .resend, "a's only resend came before the row")

        let c = try sent("c", at: 300), d = try sent("d", at: 301)
        let second = try offer([c, d], at: 400)
        try store.queueResend(contact: sam, id: c, automatically: false, at: 410)
        // The resent copy could not be read either: c is owed a Resend again.
        try store.raiseStatus(contact: sam, id: c, event: .peerCouldNotRead, at: 415)
        _ = try store.raiseStatuses(contact: sam, ids: [d], event: .deliveredReceipt, at: 420)
        XCTAssertEqual(try store.systemRow(id: second)?.action, .resend, "c is Not delivered again")

        try store.queueResend(contact: sam, id: a, automatically: false, at: 430)
        XCTAssertNil(try store.systemRow(id: row)?.action)
    }
}
