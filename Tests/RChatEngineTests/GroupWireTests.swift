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
            XCTAssertEqual(ChangeID.split(heads).flatMap(\.bytes), heads)
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

    func testHeadsCarryTheGroupAndAtMostSixteenHeadsAndNothingElse() throws {
        let sixteen = (1...16).flatMap { head(UInt8($0)) }
        for heads in [head(1), head(1) + head(2), sixteen] {
            let read = try XCTUnwrap(GroupWire.heads(GroupWire.headsBody(group: group, heads: heads)))
            XCTAssertEqual(read.group.bytes, group)
            XCTAssertEqual(read.heads.flatMap(\.bytes), heads)
        }
        XCTAssertNil(GroupWire.heads(GroupWire.headsBody(group: group, heads: head(1)) + [0]), "bytes after the heads")
        XCTAssertNil(GroupWire.heads(group + [17] + sixteen + head(17)), "more heads than a change may name")
        XCTAssertNil(GroupWire.heads(group + [2] + head(1)), "a head cut short")
        XCTAssertNil(GroupWire.heads(group), "no count")
        XCTAssertNil(GroupWire.heads(Array(group.prefix(31))))
    }

    func testASyncCarriesTheGroupAndTheChangesHeldAndNothingElse() throws {
        let ids = (1...3).map { ChangeID(head(UInt8($0)))! }
        let read = try XCTUnwrap(GroupWire.sync(GroupWire.syncBody(group: group, ids: ids)))
        XCTAssertEqual(read.group.bytes, group)
        XCTAssertEqual(read.ids, ids)
        XCTAssertNil(GroupWire.sync(GroupWire.syncBody(group: group, ids: ids) + [0]), "bytes after the ids")
        XCTAssertNil(GroupWire.sync(group + [0, 2] + head(1)), "an id cut short")
        XCTAssertNil(GroupWire.sync(group))
        // A longer log names its newest changes, as many as one envelope carries.
        let many = (0..<2_000).map { n in ChangeID([UInt8(n % 256), UInt8(n / 256)] + [UInt8](repeating: 0, count: 30))! }
        let body = GroupWire.syncBody(group: group, ids: many)
        XCTAssertEqual(GroupWire.sync(body)?.ids, Array(many.suffix(GroupWire.maxSyncIDs)))
        XCTAssertLessThan(body.count, 60 * 1024)
        var over = group
        over += [UInt8(truncatingIfNeeded: (GroupWire.maxSyncIDs + 1) >> 8), UInt8(truncatingIfNeeded: GroupWire.maxSyncIDs + 1)]
        over += (0...GroupWire.maxSyncIDs).flatMap { _ in head(1) }
        XCTAssertNil(GroupWire.sync(over), "more ids than a sync carries")
    }
}
