import XCTest
@testable import RChatCore

/// How a typed name picks a contact (the view's `/mute NAME`, as the command line matches).
final class ContactNamesTests: XCTestCase {
    func testTheSameNameWinsThenTheOnlyFoldedMatch() {
        let names = ["Bob", "bob", "Ｂｏｂ", "Éva", "Sam"]
        let pick = { (typed: String) in ContactNames.pick(typed, from: names, name: { $0 }) }
        XCTAssertEqual(pick("Bob"), "Bob")
        XCTAssertEqual(pick("bob"), "bob")
        XCTAssertEqual(pick("Ｂｏｂ"), "Ｂｏｂ")
        XCTAssertEqual(pick("ｂｏｂ"), "Ｂｏｂ", "case folds within full width")
        XCTAssertNil(pick("BOB"), "two folded matches and no same name: none is guessed")
        XCTAssertEqual(pick("e\u{301}VA"), "Éva", "decomposed and upper case")
        XCTAssertEqual(pick("sAm"), "Sam")
        XCTAssertNil(pick("Samuel"))
        XCTAssertNil(pick(""))
    }

    func testTheKeyFoldsCaseAndCompositionNotWidth() {
        XCTAssertEqual(ContactNames.key("ÉVA"), ContactNames.key("e\u{301}va"))
        XCTAssertEqual(ContactNames.key("Ёлка"), ContactNames.key("ёЛКА"))
        XCTAssertNotEqual(ContactNames.key("Ｂｏｂ"), ContactNames.key("Bob"))
    }

    func testAConversationIDIsItsRowAndOrdersByIt() {
        XCTAssertEqual(ConversationID(7), ConversationID(7))
        XCTAssertLessThan(ConversationID(2), ConversationID(10))
        XCTAssertEqual("\(ConversationID(3))", "conversation #3")
    }
}
