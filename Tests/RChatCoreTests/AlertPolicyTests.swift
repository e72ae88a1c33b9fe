import XCTest
@testable import RChatCore

final class AlertPolicyTests: XCTestCase {
    typealias A = AlertPolicy.Arrival

    func testWhatEachSettingShows() {
        let cases: [(AlertPolicy.Content, AlertPolicy.Kind, String, String)] = [
            (.name, .text("hi there"), "Sam", "New message"),
            (.nothing, .text("hi there"), "rChat", "New message"),
            (.message, .text("hi there"), "Sam", "hi there"),
            (.message, .photo, "Sam", "Photo"),
            (.message, .voiceMessage, "Sam", "Voice message"),
            (.message, .file, "Sam", "File"),
            // A file says what it is in every mode, never its name.
            (.name, .photo, "Sam", "Photo"),
            (.name, .voiceMessage, "Sam", "Voice message"),
            (.nothing, .file, "rChat", "File"),
            (.name, .request, "rChat", "New message request"),
            (.message, .request, "rChat", "New message request"),
            (.nothing, .request, "rChat", "New message request"),
            // A reaction to one's own message: the emoji only where a message would be shown.
            (.message, .reaction("👍"), "Sam", "Reacted 👍"),
            (.name, .reaction("👍"), "Sam", "New reaction"),
            (.nothing, .reaction("👍"), "rChat", "New reaction"),
        ]
        for (content, kind, title, text) in cases {
            let alert = AlertPolicy.alert(for: A(contactName: "Sam", kind: kind), content: content)
            XCTAssertEqual(alert?.title, title, "\(content) \(kind)")
            XCTAssertEqual(alert?.text, text, "\(content) \(kind)")
        }
        // A request never carries the sender's name, not even as the conversation to open.
        XCTAssertNil(AlertPolicy.alert(for: A(contactName: "Mallory", kind: .request), content: .message)?.contact)
        XCTAssertEqual(AlertPolicy.alert(for: A(contactName: "Sam", kind: .text("x")), content: .name)?.contact, "Sam")
        XCTAssertNil(AlertPolicy.alert(for: A(contactName: "Sam", kind: .text("x")), content: .nothing)?.contact)
    }

    func testWhatIsNeverAlerted() {
        let never: [A] = [
            A(contactName: "Sam", kind: .silent),
            A(contactName: "Sam", kind: .text("x"), contactMuted: true),
            A(contactName: "Sam", kind: .text("x"), contactBlockedOrDeleted: true),
            A(contactName: "Sam", kind: .text("x"), alreadyAlerted: true),
            A(contactName: "Sam", kind: .text("x"), onScreen: true),
            A(contactName: "Sam", kind: .request, alreadyAlerted: true),
        ]
        for a in never { XCTAssertNil(AlertPolicy.alert(for: a, content: .message), "\(a)") }
    }

    func testPreviewIsTheFirst100CharactersCleaned() {
        XCTAssertEqual(AlertPolicy.preview("line one\nline two\r\n\tend\u{7}"), "line one line two end\u{2407}")
        XCTAssertEqual(AlertPolicy.preview(String(repeating: "é", count: 150)).count, 100)
        XCTAssertEqual(AlertPolicy.preview("👍🏽 flags 🇫🇷 ok").count, "👍🏽 flags 🇫🇷 ok".count)
        // What a terminal would act on is shown, not dropped and not passed through.
        XCTAssertEqual(AlertPolicy.preview("\u{1b}[31mred"), "\u{241B}[31mred")
        XCTAssertEqual(AlertPolicy.preview("a\u{202E}b\u{9B}c"), "a\u{FFFD}b\u{FFFD}c")
    }

    func testDesktopBodyCarriesNoMarkup() {
        XCTAssertEqual(AlertPolicy.desktopBody("<a href=\"https://x\">click</a> & <img src=/etc/x>"),
                       "&lt;a href=\"https://x\"&gt;click&lt;/a&gt; &amp; &lt;img src=/etc/x&gt;")
        XCTAssertEqual(AlertPolicy.desktopBody("New message"), "New message")
    }

    func testAlertTitleShowsControlsInTheNameAsStandIns() throws {
        let alert = try XCTUnwrap(AlertPolicy.alert(for: A(contactName: "Sam\u{202E}\tX\u{1B}]0;t\u{7}", kind: .text("hi")), content: .name))
        XCTAssertEqual(alert.title, "Sam\u{FFFD}\u{2409}X\u{241B}]0;t\u{2407}")
        XCTAssertEqual(alert.contact, "Sam\u{202E}\tX\u{1B}]0;t\u{7}", "the conversation it opens is the contact's own name")
    }

    func testMoreThanFiveBecomeOneSummary() {
        let five = (0..<5).map { A(contactName: "Sam", kind: .text("m\($0)")) }
        XCTAssertEqual(AlertPolicy.alerts(for: five, content: .name).count, 5)
        let eight = (0..<8).map { A(contactName: $0 % 2 == 0 ? "Sam" : "Ann", kind: .text("m\($0)")) }
        XCTAssertEqual(AlertPolicy.alerts(for: eight, content: .name), [AlertPolicy.Alert(title: "rChat", text: "8 new messages", contact: nil)])
        // Muted ones do not count towards the summary.
        let mixed = (0..<6).map { A(contactName: "Sam", kind: .text("m"), contactMuted: $0 == 0) }
        XCTAssertEqual(AlertPolicy.alerts(for: mixed, content: .name).count, 5)
    }

    func testGroupedByContact() {
        let arrivals = [A(contactName: "Sam", kind: .text("1")), A(contactName: "Ann", kind: .text("2")),
                        A(contactName: "Sam", kind: .text("3"))]
        XCTAssertEqual(AlertPolicy.alerts(for: arrivals, content: .message).map(\.text), ["1", "3", "2"])
    }

    /// A group's message: titled with the group, its text saying who wrote it as the setting
    /// allows; grouped and counted per group, apart from a contact of the same name.
    func testAGroupsMessageIsTitledWithTheGroupAndNamesItsAuthor() {
        let friends = ConversationID(-1), sam = ConversationID(4)
        func inGroup(_ kind: AlertPolicy.Kind, muted: Bool = false) -> A {
            A(contactName: "Alice", conversation: friends, kind: kind, contactMuted: muted, group: "Friends")
        }
        let cases: [(AlertPolicy.Content, AlertPolicy.Kind, String, String)] = [
            (.name, .text("hi all"), "Friends", "Alice: New message"),
            (.message, .text("hi all"), "Friends", "Alice: hi all"),
            (.message, .photo, "Friends", "Alice: Photo"),
            (.name, .file, "Friends", "Alice: File"),
            (.nothing, .text("hi all"), "rChat", "New message"),
            (.nothing, .voiceMessage, "rChat", "Voice message"),
        ]
        for (content, kind, title, text) in cases {
            let alert = AlertPolicy.alert(for: inGroup(kind), content: content)
            XCTAssertEqual(alert?.title, title, "\(content) \(kind)")
            XCTAssertEqual(alert?.text, text, "\(content) \(kind)")
            XCTAssertEqual(alert?.conversation, friends)
            XCTAssertEqual(alert?.contact, content == .nothing ? nil : "Friends")
        }
        XCTAssertNil(AlertPolicy.alert(for: inGroup(.text("x"), muted: true), content: .message), "a muted group stays quiet")
        XCTAssertEqual(AlertPolicy.alert(for: A(contactName: "Alice\u{1B}[2J", conversation: friends, kind: .text("x"), group: "Friends"),
                                         content: .name)?.text, "Alice\u{241B}[2J: New message", "the author's name cleaned too")

        // Counted per group: a contact named as the group is another conversation.
        let arrivals = [inGroup(.text("1")), A(contactName: "Friends", conversation: sam, kind: .text("2")), inGroup(.text("3")),
                        A(contactName: "Bob", conversation: friends, kind: .text("4"), group: "Friends")]
        XCTAssertEqual(AlertPolicy.counted(arrivals, content: .name).map(\.line), ["Friends: 3 new messages", "Friends: New message"])
        XCTAssertEqual(AlertPolicy.counted(arrivals, content: .name).map(\.conversation), [friends, sam])
        XCTAssertEqual(AlertPolicy.alerts(for: arrivals, content: .message).map(\.text), ["Alice: 1", "Alice: 3", "Bob: 4", "2"])
    }
}
