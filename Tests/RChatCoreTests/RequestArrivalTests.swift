import XCTest
@testable import RChatCore

/// Every sender, content and namesake a request can arrive with.
final class RequestArrivalTests: XCTestCase {
    func testEveryCase() {
        let senders: [RequestArrival.Sender] = [.stranger, .known(isRequest: false, gone: false), .known(isRequest: true, gone: false),
                                                .known(isRequest: false, gone: true), .known(isRequest: true, gone: true)]
        let namesakes: [RequestArrival.Namesake] = [.none, .contact(told: false), .contact(told: true)]
        for sender in senders {
            for isControl in [false, true] {
                for namesake in namesakes {
                    let got = RequestArrival.of(sender, isControl: isControl, namesake: namesake)
                    let expected: RequestArrival
                    switch sender {
                    case .known(_, gone: true): expected = .dropped
                    case .known(isRequest: true, gone: false): expected = isControl ? .ignored : .message
                    case .known(isRequest: false, gone: false): expected = .message
                    case .stranger: expected = isControl ? .ignored : .newRequest(rowForNamesake: namesake == .contact(told: false))
                    }
                    XCTAssertEqual(got, expected, "\(sender), control \(isControl), \(namesake)")
                }
            }
        }
    }

    func testAKnownNameWithOtherKeysIsANewRequestWithOneRowNeverAMessageInThatConversation() {
        XCTAssertEqual(RequestArrival.of(.stranger, isControl: false, namesake: .contact(told: false)), .newRequest(rowForNamesake: true))
        XCTAssertEqual(RequestArrival.of(.stranger, isControl: false, namesake: .contact(told: true)), .newRequest(rowForNamesake: false),
                       "the row once per requester")
        XCTAssertEqual(RequestArrival.of(.stranger, isControl: false, namesake: .none), .newRequest(rowForNamesake: false))
        // A contact's own key: their message, whatever name their code now uses.
        XCTAssertEqual(RequestArrival.of(.known(isRequest: false, gone: false), isControl: false, namesake: .none), .message)
    }
}
