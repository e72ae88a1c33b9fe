import Foundation
import RChatCore
import RChatStore
import RChatRelayClient
import RChatWire
import XCTest
@testable import RChatEngine

/// `RelayRequests`: an answer completes the request it answers, once.
final class RelayRequestsTests: XCTestCase {
    func testAnswersOutOfOrderCompleteTheirOwnRequests() {
        var requests = RelayRequests<String>()
        requests.register(1, "message")
        requests.register(2, "chunk")
        requests.register(3, "receipt")
        XCTAssertEqual(requests.complete(3), "receipt")
        XCTAssertEqual(requests.complete(1), "message")
        XCTAssertEqual(requests.count, 1)
        XCTAssertEqual(requests.complete(2), "chunk")
        XCTAssertEqual(requests.count, 0)
    }

    func testAnAnswerTwiceCompletesNothingTheSecondTime() {
        var requests = RelayRequests<String>()
        requests.register(7, "message")
        XCTAssertEqual(requests.complete(7), "message")
        XCTAssertNil(requests.complete(7))
    }

    func testAnAnswerWithNoRequestCompletesNothingAndLeavesTheRestWaiting() {
        var requests = RelayRequests<String>()
        requests.register(1, "message")
        XCTAssertNil(requests.complete(99))
        XCTAssertEqual(requests.count, 1)
        XCTAssertEqual(requests.complete(1), "message")
    }

    func testAClosedConnectionWaitsForNothing() {
        var requests = RelayRequests<String>()
        requests.register(1, "message")
        requests.removeAll()
        XCTAssertNil(requests.complete(1))
    }
}

/// The engine's answers: each completes the request it answers; one with no request, or a
/// second answer to one request, is one log line and changes nothing.
final class EngineAnswerTests: RelayEngineTestCase {
    let offline = try! RelayAddress(parsing: "127.0.0.1:9/" + String(repeating: "A", count: 43))

    func testAnswersWithNoRequestTwiceAndOutOfOrder() throws {
        let alice = try account("Alice", relay: offline)
        let lines = logLines
        let engine = try Engine(account: alice) { lines.append($0) }
        engine.thread.claim()
        defer { engine.thread.release() }
        let connection = RelayConnection(address: offline)
        let unknown = { lines.all.filter { $0.contains("which waits for no answer") }.count }

        // No request under the number: one line, nothing else.
        try engine.handleAnswers([(connection, .sent(seq: 5, forwarded: false)), (connection, .refused(seq: 6, reason: .quotaExceeded))])
        XCTAssertEqual(unknown(), 2, lines.all.joined(separator: "\n"))
        XCTAssertNil(engine.receipts.due)

        // Out of order: each answer completes its own request (a dummy records nothing; a
        // settled Read receipt sends the next receipts at once).
        connection.requests.register(10, .readReceipts(ContactID(1), []))
        connection.requests.register(11, .dummy)
        try engine.handleAnswers([(connection, .sent(seq: 11, forwarded: false))])
        XCTAssertNil(engine.receipts.due, "the dummy's answer settles nothing")
        try engine.handleAnswers([(connection, .sent(seq: 10, forwarded: false))])
        XCTAssertNotNil(engine.receipts.due, "the receipt's answer settled it")
        XCTAssertEqual(unknown(), 2)
        XCTAssertEqual(connection.requests.count, 0)

        // Twice: the second answer completes nothing.
        engine.receipts.taken()
        try engine.handleAnswers([(connection, .sent(seq: 10, forwarded: false)), (connection, .sent(seq: 11, forwarded: false))])
        XCTAssertEqual(unknown(), 4)
        XCTAssertNil(engine.receipts.due, "nothing settled again")
    }
}
