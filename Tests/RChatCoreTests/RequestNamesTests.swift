import XCTest
@testable import RChatCore

final class RequestNamesTests: XCTestCase {
    func testAFewFixedCandidatesEndingInOneUniqueToTheKey() {
        let fingerprint: [UInt8] = [0x3f, 0x9a, 0x7c, 0x21] + [UInt8](repeating: 0xab, count: 12)
        let names = RequestNames.candidates(for: "Sam", fingerprint: fingerprint)
        XCTAssertEqual(names, ["Sam", "Sam (3f9a)", "Sam (3f9a7c21)", "Sam (3f9a7c21" + String(repeating: "ab", count: 12) + ")"])
        let other = RequestNames.candidates(for: "Sam", fingerprint: [UInt8](repeating: 1, count: 16))
        XCTAssertNotEqual(names.last, other.last, "different keys never end on the same name")
        XCTAssertEqual(Set(names).count, names.count)
    }

    func testTheNamesakeOfAListedName() {
        let fingerprint: [UInt8] = [0x3f, 0x9a, 0x7c, 0x21] + [UInt8](repeating: 0xab, count: 12)
        for listed in RequestNames.candidates(for: "Sam Lee", fingerprint: fingerprint).dropFirst() {
            XCTAssertEqual(RequestNames.namesake(of: listed), "Sam Lee", listed)
        }
        for plain in ["Sam", "Sam (2)", "Sam (3F9A)", "Sam (3f9)", "(3f9a)", "Sam (3f9a) ", "Sam(3f9a)", "Sam (zzzz)"] {
            XCTAssertNil(RequestNames.namesake(of: plain), plain)
        }
    }

    func testTheNamesakeRowWordForWord() {
        XCTAssertEqual(RequestNames.namesakeRow(used: "Sam", contact: "Sam"),
                       "Someone using the name Sam sent a message request with different keys. "
                       + "If Sam reinstalled rChat, check their new code with them before you accept it.")
        XCTAssertEqual(RequestNames.namesakeRow(used: "sam", contact: "Sam"),
                       "Someone using the name sam sent a message request with different keys. "
                       + "If Sam reinstalled rChat, check their new code with them before you accept it.")
    }
}
