import XCTest
import RChatCore

final class PrivateDirectoryTests: XCTestCase {
    let directory: UInt32 = 0o040000

    func testOwnAndClosedIsUsedAsItIs() {
        for bits: UInt32 in [0o700, 0o500, 0o300, 0o000] {
            XCTAssertEqual(PrivateDirectory.judge(mode: directory | bits, owner: 1000, user: 1000), .isPrivate, String(bits, radix: 8))
        }
    }

    func testOwnButOpenToOthersIsTightened() {
        for bits: UInt32 in [0o777, 0o770, 0o707, 0o755, 0o720, 0o702, 0o701, 0o710, 0o1777, 0o2770] {
            XCTAssertEqual(PrivateDirectory.judge(mode: directory | bits, owner: 1000, user: 1000), .tighten(from: bits), String(bits, radix: 8))
        }
    }

    func testAnotherUsersIsRefusedWhateverItsMode() {
        for bits: UInt32 in [0o700, 0o777, 0o000] {
            XCTAssertEqual(PrivateDirectory.judge(mode: directory | bits, owner: 65534, user: 1000), .ownedByAnother(owner: 65534))
            // root is no exception: a directory another user owns is theirs to plant links in.
            XCTAssertEqual(PrivateDirectory.judge(mode: directory | bits, owner: 65534, user: 0), .ownedByAnother(owner: 65534))
        }
        XCTAssertEqual(PrivateDirectory.judge(mode: directory | 0o700, owner: 0, user: 1000), .ownedByAnother(owner: 0))
    }

    func testWhatIsNotADirectoryIsRefused() {
        for type: UInt32 in [0o100000, 0o120000, 0o140000, 0o010000, 0o020000, 0o060000] {
            XCTAssertEqual(PrivateDirectory.judge(mode: type | 0o700, owner: 1000, user: 1000), .notADirectory)
        }
    }
}
