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
}
