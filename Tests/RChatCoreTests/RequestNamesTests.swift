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
}
