import XCTest
import RChatCore

final class UploadWaitTests: XCTestCase {
    /// Every input, and the one answer each has.
    func testEveryCase() {
        for allTaken in [false, true] {
            for route in UploadWait.Route.allCases {
                for refused in [false, true] {
                    let expected: UploadWait?
                    switch (allTaken, route, refused) {
                    case (true, _, _): expected = nil                     // nothing left to go
                    case (false, .offline, _): expected = nil             // the connection's line says it
                    case (false, .unverifiedDevice, _): expected = nil    // the new-device row says it
                    case (false, .noSession, _): expected = .contact      // nothing goes until they are back
                    case (false, .session, true): expected = .room
                    case (false, .session, false): expected = nil         // it moves
                    }
                    XCTAssertEqual(UploadWait.reason(allTaken: allTaken, route: route, refusedForRoom: refused), expected,
                                   "allTaken \(allTaken), \(route), refused \(refused)")
                }
            }
        }
    }

    func testTheWordsAndTheStoredNames() {
        XCTAssertEqual(UploadWait.room.words(contact: "Sam"), "waiting for room at the relay")
        XCTAssertEqual(UploadWait.contact.words(contact: "Sam"), "waiting for Sam to come back")
        XCTAssertEqual(UploadWait.allCases.map(\.rawValue), ["room", "contact"], "what the store and --json say")
    }
}
