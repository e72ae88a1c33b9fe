import RChatCore
import XCTest
@testable import RChatEngine

/// The bodies of a group's envelopes (docs/PROTOCOL.md "Groups on the wire"): each reads back
/// as written; a body with more heads than a log gives, cut short, or with bytes after a
/// sync's heads does not read.
final class GroupWireTests: XCTestCase {
    let group = [UInt8](repeating: 9, count: 32)
    func head(_ n: UInt8) -> [UInt8] { [UInt8](repeating: n, count: 32) }

    func testAMessageCarriesItsGroupTimerHeadsAndContent() throws {
        let content = MessageContent.text("hi").encoded()
        for heads in [[], head(1), head(1) + head(2)] {
            let body = GroupWire.messageBody(group: group, timer: 3600, heads: heads, content: content)
            let read = try XCTUnwrap(GroupWire.message(body))
            XCTAssertEqual(read.group.bytes, group)
            XCTAssertEqual(read.timer, 3600)
            XCTAssertEqual(read.heads.flatMap(\.bytes), heads)
            XCTAssertEqual(read.content, content)
            XCTAssertEqual(GroupWire.heads(heads).flatMap(\.bytes), heads)
        }
        XCTAssertEqual(GroupWire.message(GroupWire.messageBody(group: group, timer: nil, heads: [], content: []))?.timer, 0)
    }

    func testABodyThatIsNotOneDoesNotRead() {
        let sixteen = (1...16).flatMap { head(UInt8($0)) }
        XCTAssertNotNil(GroupWire.message(group + [0, 0, 0, 0, 16] + sixteen))
        XCTAssertNil(GroupWire.message(group + [0, 0, 0, 0, 17] + sixteen + head(17)), "more heads than a change may name")
        XCTAssertNil(GroupWire.message(group + [0, 0, 0, 0, 2] + head(1)), "a head cut short")
        XCTAssertNil(GroupWire.message(group + [0, 0, 0, 0]), "no count")
        XCTAssertNil(GroupWire.message(Array(group.prefix(31))))
    }

    func testASyncCarriesTheGroupAndItsHeadsAndNothingElse() throws {
        let read = try XCTUnwrap(GroupWire.sync(GroupWire.syncBody(group: group, heads: head(4) + head(5))))
        XCTAssertEqual(read.group.bytes, group)
        XCTAssertEqual(read.heads.map(\.bytes), [head(4), head(5)])
        XCTAssertNil(GroupWire.sync(GroupWire.syncBody(group: group, heads: head(4)) + [0]), "bytes after the heads")
        XCTAssertNil(GroupWire.sync(group + [17] + (0..<17).flatMap { head(UInt8($0)) }))
        XCTAssertNil(GroupWire.sync(group))
    }
}
