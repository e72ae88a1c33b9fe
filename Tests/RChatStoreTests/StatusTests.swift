import RChatCore
import RChatSQL
import XCTest
@testable import RChatStore

final class StatusTests: StoreTestCase {
    func testRaiseStatusFollowsTheLatticeAndNeverLowersForEveryStatusAndEvent() throws {
        for status in MessageStatus.allCases {
            for event in StatusEvent.allCases {
                let row = try outgoing(in: status)
                let logBefore = try store.statusLog(message: row).count
                let change = try XCTUnwrap(store.raiseStatus(message: row, event: event, at: 3_000))
                let label = "\(status) + \(event)"
                XCTAssertEqual(change.previous, status, label)
                XCTAssertEqual(change.current, StatusLattice.raise(status, event), label)
                XCTAssertEqual(try store.message(row)?.status, change.current, label)
                if status == .read { XCTAssertEqual(change.current, .read, label) }
                if status == .delivered { XCTAssertTrue(change.current.isFinal, label) }
                let log = try store.statusLog(message: row)
                XCTAssertEqual(log.count, logBefore + (change.changed ? 1 : 0), label)
                if change.changed { XCTAssertEqual(log.last, StatusLogEntry(status: change.current, at: 3_000), label) }
            }
        }
    }

    /// A receipt frame raises many messages at once: the same result, message by message,
    /// as one `raiseStatus` each, for every status, with duplicates, unknown ids and other
    /// contacts' messages among them, across several statements (over 64 ids).
    func testARaiseOfManyMatchesOneRaiseEachForEveryStatus() throws {
        for event in [StatusEvent.deliveredReceipt, .readReceipt] {
            var rows: [(MessageID, MessageRowID, MessageStatus)] = []
            for round in 0..<12 {
                for status in MessageStatus.allCases {
                    let id = MessageID.random()
                    rows.append((id, try outgoing(in: status, id: id), status))
                    if round == 0 { try store.database.execute("DELETE FROM outbox WHERE message_rowid = ?", [.integer(rows.last!.1.rawValue)]) }
                }
            }
            let alex = try store.addContact(Self.newContact("Alex \(event)", key: event == .readReceipt ? 50 : 60), at: 1).id
            let theirs = MessageID.random()
            try store.insertOutgoing(contact: alex, id: theirs, content: .text("to Alex"), at: 1)
            let ids = rows.map(\.0) + [rows[3].0, .random(), theirs]
            let logBefore = try count("status_log")

            let changes = try store.transaction { tx in try tx.raiseStatuses(contact: sam, ids: ids, event: event, at: 4_000) }

            XCTAssertEqual(changes.count, rows.count, "each of Sam's messages once; the unknown id and Alex's are skipped")
            for (id, row, status) in rows {
                let label = "\(status) + \(event)"
                let change = try XCTUnwrap(changes.first { $0.id == id }, label)
                XCTAssertEqual(change.message, row, label)
                XCTAssertEqual(change.previous, status, label)
                XCTAssertEqual(change.current, StatusLattice.raise(status, event), label)
                XCTAssertEqual(try store.message(row)?.status, change.current, label)
                if change.changed { XCTAssertEqual(try store.statusLog(message: row).last, StatusLogEntry(status: change.current, at: 4_000), label) }
            }
            XCTAssertEqual(try count("status_log"), logBefore + Int64(changes.filter(\.changed).count))
            XCTAssertEqual(try store.outbox(contact: sam).count, 0, "proof it arrived: nothing left to send")
            XCTAssertEqual(try store.message(contact: alex, id: theirs)?.status, .sending, "another contact's message is untouched")
            try store.database.execute("DELETE FROM status_log")
            try store.database.execute("DELETE FROM outbox")
            try store.database.execute("DELETE FROM messages")
        }
    }

    /// The relay's acknowledgements, many at once by row: Sent where the lattice says so,
    /// each off the outbox, incoming rows and unknown rows skipped.
    func testARaiseOfManyRowsMatchesTheLattice() throws {
        var rows: [(MessageRowID, MessageStatus)] = []
        for _ in 0..<10 { for status in MessageStatus.allCases { rows.append((try outgoing(in: status), status)) } }
        let incoming = try XCTUnwrap(store.insertIncoming(contact: sam, id: .random(), content: .text("theirs"), at: 1))
        let changes = try store.transaction { tx in
            try tx.raiseStatuses(messages: rows.map(\.0) + [incoming, MessageRowID(999_999), rows[0].0], event: .relayAcknowledged, at: 5_000)
        }
        XCTAssertEqual(changes.map(\.message), rows.map(\.0).sorted { $0.rawValue < $1.rawValue })
        for (row, status) in rows {
            XCTAssertEqual(try store.message(row)?.status, StatusLattice.raise(status, .relayAcknowledged), "\(status)")
        }
        XCTAssertEqual(try store.outbox(contact: sam).count, 0)
        XCTAssertNil(try store.message(incoming)?.status)
    }

    func testReceiptsInAnyOrderEndAtTheHighestProof() throws {
        let orders: [[StatusEvent]] = [
            [.readReceipt, .deliveredReceipt, .relayAcknowledged, .acknowledgementTimedOut, .peerCouldNotRead, .gaveUp],
            [.deliveredReceipt, .acknowledgementTimedOut, .readReceipt, .relayAcknowledged, .peerCouldNotRead],
            [.acknowledgementTimedOut, .deliveredReceipt, .relayAcknowledged, .resending, .gaveUp, .peerCouldNotRead],
        ]
        for events in orders {
            let id = MessageID.random()
            try store.insertOutgoing(contact: sam, id: id, content: .text("x"), at: 1)
            for (i, event) in events.enumerated() {
                try store.raiseStatus(contact: sam, id: id, event: event, at: 10 + Int64(i))
            }
            let expected: MessageStatus = events.contains(.readReceipt) ? .read : .delivered
            XCTAssertEqual(try store.message(contact: sam, id: id)?.status, expected, "\(events)")
        }
    }

    func testRaiseStatusOnAnUnknownOrIncomingMessageChangesNothing() throws {
        XCTAssertNil(try store.raiseStatus(contact: sam, id: .random(), event: .readReceipt, at: 1))
        let id = MessageID.random()
        try store.insertIncoming(contact: sam, id: id, content: .text("theirs"), at: 1)
        XCTAssertNil(try store.raiseStatus(contact: sam, id: id, event: .deliveredReceipt, at: 2))
        XCTAssertNil(try store.message(contact: sam, id: id)?.status)
    }

    /// A status row for each outgoing message, none for an incoming one; it goes with its message.
    func testOnlyOutgoingMessagesHaveAStatusRowAndItGoesWithTheMessage() throws {
        let out = try store.insertOutgoing(contact: sam, id: .random(), content: .text("mine"), at: 1)
        let incoming = try XCTUnwrap(try store.insertIncoming(contact: sam, id: .random(), content: .text("theirs"), at: 1))
        let statusRows = { (row: MessageRowID) in
            try XCTUnwrap(self.store.database.queryOne("SELECT count(*) FROM message_status WHERE message_rowid = ?",
                                                       [.integer(row.rawValue)])?.int(at: 0))
        }
        XCTAssertEqual(try statusRows(out), 1)
        XCTAssertEqual(try statusRows(incoming), 0)
        XCTAssertEqual(try store.message(out)?.status, .sending)
        XCTAssertNil(try store.message(incoming)?.status)
        try store.database.execute("DELETE FROM messages WHERE rowid = ?", [.integer(out.rawValue)])
        XCTAssertEqual(try statusRows(out), 0)
    }

    func testTheTriggerRefusesEveryRawWriteThatLowersDeliveredOrRead() throws {
        for from in MessageStatus.allCases {
            for to in MessageStatus.allCases {
                let row = try outgoing(in: from)
                let lowers = (from == .delivered && to != .delivered && to != .read) || (from == .read && to != .read)
                let update = { try self.store.database.execute("UPDATE message_status SET status = ? WHERE message_rowid = ?",
                                                               [.text(to.rawValue), .integer(row.rawValue)]) }
                if lowers {
                    XCTAssertThrowsError(try update(), "\(from) → \(to)") { error in
                        let e = error as? DatabaseError
                        XCTAssertEqual(e?.extendedCode, ResultCode.constraintTrigger)
                        XCTAssertEqual(e?.message, "a Delivered or Read status is never lowered")
                    }
                    XCTAssertEqual(try store.message(row)?.status, from, "\(from) → \(to) left it alone")
                } else {
                    XCTAssertNoThrow(try update(), "\(from) → \(to)")
                    XCTAssertEqual(try store.message(row)?.status, to)
                }
            }
        }
        // Nor can a final status be cleared.
        let read = try outgoing(in: .read)
        XCTAssertThrowsError(try store.database.execute("UPDATE message_status SET status = NULL WHERE message_rowid = ?", [.integer(read.rawValue)]))
    }

    func testTheTimelineRecordsEachStatusWithItsTime() throws {
        let id = MessageID.random()
        let row = try store.insertOutgoing(contact: sam, id: id, content: .text("x"), at: 100)
        try store.raiseStatus(contact: sam, id: id, event: .acknowledgementTimedOut, at: 130)
        try store.raiseStatus(contact: sam, id: id, event: .relayAcknowledged, at: 140)
        try store.raiseStatus(contact: sam, id: id, event: .relayAcknowledged, at: 141)  // nothing new
        try store.raiseStatus(contact: sam, id: id, event: .deliveredReceipt, at: 150)
        try store.raiseStatus(contact: sam, id: id, event: .peerCouldNotRead, at: 155)   // too late to matter
        try store.raiseStatus(contact: sam, id: id, event: .readReceipt, at: 160)
        XCTAssertEqual(try store.statusLog(message: row), [
            StatusLogEntry(status: .sending, at: 100),
            StatusLogEntry(status: .notConfirmed, at: 130),
            StatusLogEntry(status: .sent, at: 140),
            StatusLogEntry(status: .delivered, at: 150),
            StatusLogEntry(status: .read, at: 160),
        ])
    }

    func testResendRequeuesWithTheSameIdUnlessAReceiptProvedDelivery() throws {
        let id = MessageID.random()
        let row = try store.insertOutgoing(contact: sam, id: id, content: .text("x"), at: 100)
        try store.raiseStatus(contact: sam, id: id, event: .relayAcknowledged, at: 101)
        XCTAssertTrue(try store.removeFromOutbox(message: row))
        try store.raiseStatus(contact: sam, id: id, event: .peerCouldNotRead, at: 200)

        let change = try XCTUnwrap(store.queueResend(contact: sam, id: id, automatically: true, at: 210))
        XCTAssertEqual(change.previous, .notDelivered)
        XCTAssertEqual(change.current, .sending)
        let message = try XCTUnwrap(store.message(row))
        XCTAssertTrue(message.isResent)
        XCTAssertEqual(message.autoResentAt, 210)
        XCTAssertEqual(try store.outbox(contact: sam).map(\.id), [id])
        XCTAssertEqual(try store.autoResentCount(contact: sam, since: 200), 1)
        XCTAssertEqual(try store.autoResentCount(contact: sam, since: 211), 0)

        try store.raiseStatus(contact: sam, id: id, event: .deliveredReceipt, at: 220)
        XCTAssertTrue(try store.removeFromOutbox(message: row))
        let refused = try XCTUnwrap(store.queueResend(contact: sam, id: id, automatically: false, at: 230))
        XCTAssertFalse(refused.changed)
        XCTAssertEqual(refused.current, .delivered)
        XCTAssertEqual(try store.outbox(contact: sam), [])
    }
}
