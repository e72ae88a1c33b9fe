import XCTest
@testable import RChatCore

final class ResendPolicyTests: XCTestCase {
    let now: Int64 = 1_800_000_000

    func facts(signer: ResendPolicy.NoticeSigner = .pinnedDevice, unchanged: Bool = true, age: Int64 = 60,
               status: MessageStatus = .sent, before: Bool = false) -> ResendPolicy.Facts {
        .init(signer: signer, keysUnchangedSinceSent: unchanged, sentAt: now - age, status: status, autoResentBefore: before)
    }

    func testEveryCondition() {
        let cases: [(String, ResendPolicy.Facts, Int, ResendPolicy.Decision)] = [
            ("all hold", facts(), 0, .resendAutomatically),
            ("Sending counts as never delivered", facts(status: .sending), 0, .resendAutomatically),
            ("Not confirmed", facts(status: .notConfirmed), 0, .resendAutomatically),
            ("new phone: unpinned device key", facts(signer: .unpinnedDevice), 0, .notDelivered(offerResend: true)),
            ("keys changed since sent", facts(unchanged: false), 0, .notDelivered(offerResend: false)),
            ("72 h exactly", facts(age: 72 * 3600), 0, .resendAutomatically),
            ("72 h and 1 s", facts(age: 72 * 3600 + 1), 0, .notDelivered(offerResend: true)),
            ("72 h less 1 s", facts(age: 72 * 3600 - 1), 0, .resendAutomatically),
            ("Delivered never goes back", facts(status: .delivered), 0, .keep),
            ("Read never goes back", facts(status: .read), 0, .keep),
            ("second automatic resend of the same message", facts(before: true), 0, .notDelivered(offerResend: true)),
            ("49 in the last day: the 50th goes", facts(), 49, .resendAutomatically),
            ("50 in the last day: the 51st does not", facts(), 50, .notDelivered(offerResend: true)),
            ("already Not delivered, again", facts(status: .notDelivered), 0, .resendAutomatically),
        ]
        for (name, f, count, expected) in cases {
            XCTAssertEqual(ResendPolicy.decide(f, now: now, autoResentInLastDay: count), expected, name)
        }
    }

    func testBatchCountsAgainstTheDailyLimit() {
        let decisions = ResendPolicy.decide(Array(repeating: facts(), count: 53), now: now, autoResentInLastDay: 0)
        XCTAssertEqual(decisions.filter { $0 == .resendAutomatically }.count, 50)
        XCTAssertEqual(decisions[49], .resendAutomatically)
        XCTAssertEqual(decisions[50], .notDelivered(offerResend: true))
        // Delivered messages in between don't use up the limit.
        let mixed = [facts(status: .delivered)] + Array(repeating: facts(), count: 3)
        XCTAssertEqual(ResendPolicy.decide(mixed, now: now, autoResentInLastDay: 48),
                       [.keep, .resendAutomatically, .resendAutomatically, .notDelivered(offerResend: true)])
    }

    func testRowsAreTheSeedsWords() {
        XCTAssertEqual(RecoveryRows.resentAutomatically(name: "Sam", count: 1), "Sam's phone couldn't read 1 message, so rChat sent it again.")
        XCTAssertEqual(RecoveryRows.resentAutomatically(name: "Sam", count: 3), "Sam's phone couldn't read 3 messages, so rChat sent them again.")
        XCTAssertEqual(RecoveryRows.couldNotBeRead(name: "Sam", count: 2), "2 messages couldn't be read on Sam's phone.")
        XCTAssertEqual(RecoveryRows.couldNotBeRead(name: "Sam", count: 1), "1 message couldn't be read on Sam's phone.")
        XCTAssertEqual(RecoveryRows.couldNotDecrypt(name: "Alice", count: 4),
                       "4 messages from Alice couldn't be decrypted on this phone. Alice has been told, so they can resend them.")
        XCTAssertEqual(RecoveryRows.startedOver(name: "Sam", count: 2),
                       "Sam's phone started a new secure session with you. 2 messages may not have reached them.")
    }
}

final class KeysChangedRowTests: XCTestCase {
    func testWording() {
        XCTAssertEqual(RecoveryRows.keysChanged(name: "Sam", count: 0), "Sam's keys changed.")
        XCTAssertEqual(RecoveryRows.keysChanged(name: "Sam", count: 2),
                       "Sam's keys changed. 2 messages may not have arrived; resend them if you trust the change.")
    }
}

final class KeysChangedSingularTests: XCTestCase {
    func testOneMessage() {
        XCTAssertEqual(RecoveryRows.keysChanged(name: "Sam", count: 1),
                       "Sam's keys changed. 1 message may not have arrived; resend it if you trust the change.")
    }

    func testTheUsersResendGoesOnlyToTheKeysAMessageWasWrittenFor() {
        let byUser = ResendPolicy.byUser
        XCTAssertEqual(byUser(.notDelivered, true, false), .resend)
        XCTAssertEqual(byUser(.failedToSend, true, false), .resend)
        XCTAssertEqual(byUser(.sent, true, false), .notOffered, "on its way: only by its id")
        XCTAssertEqual(byUser(.sent, true, true), .resend, "a row offers it")
        XCTAssertEqual(byUser(.notDelivered, false, false), .keysChanged)
        XCTAssertEqual(byUser(.failedToSend, false, false), .keysChanged)
        XCTAssertEqual(byUser(.sent, false, false), .keysChanged)
        XCTAssertEqual(byUser(.sent, false, true), .resend, "the keys-changed row: the user trusts the change")
        for status in [MessageStatus.delivered, .read] {
            XCTAssertEqual(byUser(status, true, true), .arrived)
            XCTAssertEqual(byUser(status, false, false), .arrived)
        }
    }
}
