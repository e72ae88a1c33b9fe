import RChatCore
import XCTest
@testable import RChatStore

final class AccountAndQueueTests: StoreTestCase {
    func testAccountAndSettings() throws {
        XCTAssertNil(try store.account())
        var account = Account(name: "Me", relayAddress: "127.0.0.1:7000/key", publicKey: [1, 2], secretKey: [0, 3, 0], inviteSalt: [4], mailboxSeed: [7], deviceKey: [5], deviceSeal: [6], secretsAtRest: .sealedToDevice, createdAt: 10)
        try store.putAccount(account)
        XCTAssertEqual(try store.account(), account)
        account.publicKey = [9]
        account.secretKey = [8]
        try store.putAccount(account)
        XCTAssertEqual(try store.account(), account, "rotation replaces the one row")
        XCTAssertEqual(try count("account"), 1)

        XCTAssertNil(try store.setting(SettingKey.showInAlerts))
        try store.setSetting(SettingKey.showInAlerts, "message")
        try store.setSetting(SettingKey.showInAlerts, "nothing")
        try store.setSetting(SettingKey.receiptWindow, "2")
        XCTAssertEqual(try store.settings(), ["show_in_alerts": "nothing", "receipt_window": "2"])
        try store.setSetting(SettingKey.showInAlerts, nil)
        XCTAssertNil(try store.setting(SettingKey.showInAlerts))
    }

    func testOutboxDueAttemptsAndRemoval() throws {
        let a = try store.insertOutgoing(contact: sam, id: .random(), content: .text("a"), at: 100)
        let b = try store.insertOutgoing(contact: sam, id: .random(), content: .text("b"), at: 105)
        XCTAssertEqual(try store.dueOutbox(at: 99), [])
        XCTAssertEqual(try store.dueOutbox(at: 100).map(\.message), [a])
        XCTAssertEqual(try store.dueOutbox(at: 200).map(\.message), [a, b])

        try store.recordSendAttempt(message: a, session: [0xAA], nextAttemptAt: 300)
        let item = try XCTUnwrap(store.outbox(contact: sam).first)
        XCTAssertEqual(item.attempts, 1)
        XCTAssertEqual(item.nextAttemptAt, 300)
        XCTAssertEqual(item.sentInSession, [0xAA])
        XCTAssertEqual(item.content, .text("a"))
        XCTAssertEqual(try store.dueOutbox(at: 200).map(\.message), [b])

        XCTAssertTrue(try store.removeFromOutbox(message: b))
        XCTAssertFalse(try store.removeFromOutbox(message: b))
        XCTAssertThrowsError(try store.recordSendAttempt(message: b, session: nil, nextAttemptAt: 1))
        XCTAssertEqual(try store.outbox(contact: sam).map(\.message), [a])
    }

    func testAnAlertIsRecordedOnlyOncePerMessage() throws {
        let row = try XCTUnwrap(store.insertIncoming(contact: sam, id: .random(), content: .text("hi"), at: 5))
        XCTAssertNotNil(try store.recordAlert(contact: sam, message: row, kind: "message", title: "Sam", text: "New message", at: 6))
        XCTAssertNil(try store.recordAlert(contact: sam, message: row, kind: "message", title: "Sam", text: "New message", at: 7))
        XCTAssertTrue(try store.hasAlert(message: row, kind: "message"))
        XCTAssertFalse(try store.hasAlert(message: row, kind: "other"))
        // Summaries are not about one message and are always recorded.
        XCTAssertNotNil(try store.recordAlert(contact: nil, message: nil, kind: "summary", title: "rChat", text: "6 new messages", at: 8))
        XCTAssertNotNil(try store.recordAlert(contact: nil, message: nil, kind: "summary", title: "rChat", text: "7 new messages", at: 9))
        XCTAssertEqual(try store.alerts(since: 0).map(\.text), ["New message", "6 new messages", "7 new messages"])
        XCTAssertEqual(try store.alerts(since: 8).count, 2)
    }
}
