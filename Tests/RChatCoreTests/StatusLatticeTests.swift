import XCTest
@testable import RChatCore

final class StatusLatticeTests: XCTestCase {
    /// The whole table: every (status, event) pair and what it must become.
    func testEveryTransition() {
        typealias S = MessageStatus
        let expected: [S: [StatusEvent: S]] = [
            .sending: [.relayAcknowledged: .sent, .acknowledgementTimedOut: .notConfirmed, .deliveredReceipt: .delivered,
                       .readReceipt: .read, .peerCouldNotRead: .notDelivered, .resending: .sending, .gaveUp: .failedToSend],
            .sent: [.relayAcknowledged: .sent, .acknowledgementTimedOut: .sent, .deliveredReceipt: .delivered,
                    .readReceipt: .read, .peerCouldNotRead: .notDelivered, .resending: .sending, .gaveUp: .sent],
            .notConfirmed: [.relayAcknowledged: .sent, .acknowledgementTimedOut: .notConfirmed, .deliveredReceipt: .delivered,
                            .readReceipt: .read, .peerCouldNotRead: .notDelivered, .resending: .sending, .gaveUp: .notConfirmed],
            .notDelivered: [.relayAcknowledged: .notDelivered, .acknowledgementTimedOut: .notDelivered, .deliveredReceipt: .delivered,
                            .readReceipt: .read, .peerCouldNotRead: .notDelivered, .resending: .sending, .gaveUp: .notDelivered],
            .failedToSend: [.relayAcknowledged: .failedToSend, .acknowledgementTimedOut: .failedToSend, .deliveredReceipt: .delivered,
                            .readReceipt: .read, .peerCouldNotRead: .failedToSend, .resending: .sending, .gaveUp: .failedToSend],
            .delivered: [.relayAcknowledged: .delivered, .acknowledgementTimedOut: .delivered, .deliveredReceipt: .delivered,
                         .readReceipt: .read, .peerCouldNotRead: .delivered, .resending: .delivered, .gaveUp: .delivered],
            .read: [.relayAcknowledged: .read, .acknowledgementTimedOut: .read, .deliveredReceipt: .read,
                    .readReceipt: .read, .peerCouldNotRead: .read, .resending: .read, .gaveUp: .read],
        ]
        XCTAssertEqual(expected.count, MessageStatus.allCases.count)
        for status in MessageStatus.allCases {
            for event in StatusEvent.allCases {
                XCTAssertEqual(StatusLattice.raise(status, event), expected[status]?[event],
                               "\(status) + \(event)")
            }
        }
    }

    func testDeliveredAndReadAreNeverLowered() {
        for start in [MessageStatus.delivered, .read] {
            // Any sequence of events, in any order: never below where it started.
            var status = start
            for _ in 0..<3 {
                for event in StatusEvent.allCases.shuffled() {
                    status = StatusLattice.raise(status, event)
                    XCTAssertTrue(status.isFinal)
                    if start == .read { XCTAssertEqual(status, .read) }
                }
            }
        }
    }

    func testOutOfOrderReceiptsEndAtRead() {
        var s = MessageStatus.sending
        for e in [StatusEvent.readReceipt, .deliveredReceipt, .relayAcknowledged, .acknowledgementTimedOut] {
            s = StatusLattice.raise(s, e)
        }
        XCTAssertEqual(s, .read)
    }

    func testPermits() {
        XCTAssertTrue(StatusLattice.permits(from: .sending, to: .sent))
        XCTAssertTrue(StatusLattice.permits(from: .delivered, to: .read))
        XCTAssertFalse(StatusLattice.permits(from: .delivered, to: .sent))
        XCTAssertFalse(StatusLattice.permits(from: .read, to: .delivered))
        XCTAssertFalse(StatusLattice.permits(from: .sent, to: .notConfirmed))
        for s in MessageStatus.allCases { XCTAssertTrue(StatusLattice.permits(from: s, to: s)) }
    }

    func testWordsAreTheSeeds() {
        XCTAssertEqual(MessageStatus.allCases.map(\.rawValue),
                       ["Sending", "Sent", "Delivered", "Read", "Not delivered", "Not confirmed", "Failed to send"])
    }
}
