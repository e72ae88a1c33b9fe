import RChatCore
import XCTest
@testable import RChatStore

/// The outbox records who put a message on its way (`SendPolicy.Origin`): the user and where
/// the conversation stood when they asked, or rChat itself; entering the contact's code again
/// removes "Sam is using a new device…" and what counted as asked for below it.
final class OutboxOriginTests: StoreTestCase {
    func origin(_ id: MessageID) throws -> SendPolicy.Origin? {
        try store.outbox(contact: sam).first { $0.id == id }?.origin
    }

    func testWrittenAndResentByHandAreAskedForWhereTheConversationStoodAutomaticIsNot() throws {
        let device = SystemRowKind.newDevice([UInt8](repeating: 7, count: 32))
        let early = MessageID.random()
        let earlyRow = try store.insertOutgoing(contact: sam, id: early, content: .text("early"), at: 100)
        let earlyPosition = try XCTUnwrap(store.message(earlyRow)?.position)
        XCTAssertEqual(try origin(early), .byHand(askedAt: earlyPosition), "written: asked for at its own place")

        let row = try store.addSystemRow(contact: sam, kind: device, text: "Sam is using a new device.", action: nil, messageIDs: [], at: 200)
        XCTAssertGreaterThan(row.position, earlyPosition)
        XCTAssertEqual(try store.systemRowPosition(contact: sam, kind: device, since: 0), row.position)
        XCTAssertEqual(try store.systemRowPosition(contact: sam, kind: device, since: 201), nil, "only since their keys last changed")
        XCTAssertEqual(try store.newDeviceRowPosition(contact: sam, since: 0), row.position)
        XCTAssertEqual(try store.newDeviceRowPosition(contact: sam, since: 201), nil)

        let later = MessageID.random()
        try store.insertOutgoing(contact: sam, id: later, content: .text("later"), at: 210)
        guard case .byHand(let laterAsked)? = try origin(later) else { return XCTFail("written by hand") }
        XCTAssertGreaterThan(laterAsked, row.position, "written below the row")

        // A Resend by hand moves what the user asked for below the row; an automatic one asks nothing.
        _ = try store.raiseStatuses(messages: [earlyRow], event: .relayAcknowledged, at: 220)
        try store.queueResend(contact: sam, id: early, automatically: true, at: 230)
        XCTAssertEqual(try origin(early), .automatic)
        try store.queueResend(contact: sam, id: early, automatically: false, at: 240)
        guard case .byHand(let resentAsked)? = try origin(early) else { return XCTFail("resent by hand") }
        XCTAssertGreaterThan(resentAsked, row.position)

        // Their code entered again: the row goes, and nothing counts as asked for below a place
        // a later row may take.
        try store.removeNewDeviceRows(contact: sam)
        XCTAssertEqual(try store.newDeviceRowPosition(contact: sam, since: 0), nil)
        XCTAssertEqual(try store.systemRow(id: row.id), nil)
        XCTAssertEqual(try origin(early), .automatic)
        XCTAssertEqual(try origin(later), .automatic)
    }
}
