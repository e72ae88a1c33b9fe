import XCTest
import RChatCore
@testable import RChatTUI

/// A group in the view (issue 30): each author's name in their own colour, the name column
/// as wide as the names need, how many members a message reached where they differ
/// ("√√ 1/2"), and `/members`, `/add NAME`, `/remove NAME`, `/leave`.
final class GroupViewTests: XCTestCase {
    private func run(_ view: ChatView, _ line: String) {
        view.type(line)
        view.press(.enter)
    }

    /// Friends: Alice and Bartholomew write, this side writes once (Delivered to Alice, Sent to Bartholomew).
    private func friends(_ model: FakeChatModel) -> ConversationID {
        let group = model.contact("Friends")
        model.summaries[model.summaries.count - 1].members = 3
        for (author, text) in [("Alice", "hi all"), ("Bartholomew", "hello there")] {
            let id = model.addMessage(group, .incoming, text)
            if case .message(var m) = model.items[group]!.last! {
                m.author = author
                model.items[group]![model.items[group]!.count - 1] = .message(m)
            }
            _ = id
        }
        model.addMessage(group, .outgoing, "and me", status: .sent)
        if case .message(var m) = model.items[group]!.last! {
            m.deliveries = [.init(member: "Alice", status: .delivered), .init(member: "Bartholomew", status: .sent),
                            .init(member: "Gone", status: .sending, isCurrent: false)]
            model.items[group]![model.items[group]!.count - 1] = .message(m)
        }
        model.groupMemberLines[group] = [
            GroupMemberLine(name: "You", isAdmin: true, state: "current", addedBy: nil, isSelf: true),
            GroupMemberLine(name: "Alice", isAdmin: false, state: "current", addedBy: nil, isSelf: false),
            GroupMemberLine(name: "Bartholomew", isAdmin: false, state: "current", addedBy: "You", isSelf: false),
            GroupMemberLine(name: "Gone", isAdmin: false, state: "left", addedBy: nil, isSelf: false),
        ]
        return group
    }

    func testAuthorsHaveTheirOwnColoursAndTheColumnHoldsTheirNames() throws {
        let model = FakeChatModel()
        let group = friends(model)
        let view = makeView(model, rows: 24, columns: 100)
        view.open(group)
        let screen = view.frame()
        let alice = try XCTUnwrap(screen.position(of: "Alice"), screen.dump)
        let bart = try XCTUnwrap(screen.position(of: "Bartholomew"), screen.dump)
        let aliceRole = screen[alice.row, alice.column].style.role, bartRole = screen[bart.row, bart.column].style.role
        XCTAssertEqual(aliceRole, ColorRole.member(named: "Alice"))
        XCTAssertEqual(bartRole, ColorRole.member(named: "Bartholomew"))
        XCTAssertTrue(ColorRole.members.contains(aliceRole) && ColorRole.members.contains(bartRole))
        XCTAssertNotEqual(aliceRole, bartRole, "these two names differ in colour")
        // The texts start after the widest name, in one column.
        let hi = try XCTUnwrap(screen.position(of: "hi all")), hello = try XCTUnwrap(screen.position(of: "hello there"))
        XCTAssertEqual(hi.column, hello.column)
        XCTAssertGreaterThan(hello.column, bart.column + "Bartholomew".count - 1, "Bartholomew is not cut short: \(screen.dump)")
        // One of the two current members has it: √√ 1/2 (the member who left does not count).
        XCTAssertNotNil(screen.position(of: "√√ 1/2"), screen.dump)
    }

    func testColoursAreStableAndTheCountsAreShownOnlyWhereMembersDiffer() {
        XCTAssertEqual(ColorRole.member(named: "Alice"), ColorRole.member(named: "Alice"))
        XCTAssertEqual(Set((0..<60).map { ColorRole.member(named: "member \($0)") }).count, ColorRole.members.count, "every colour is used")
        typealias D = MessageItem.MemberDelivery
        XCTAssertNil(ConversationPane.furthest(nil), "one-to-one")
        XCTAssertNil(ConversationPane.furthest([D(member: "A", status: .delivered), D(member: "B", status: .delivered)]), "all alike")
        XCTAssertNil(ConversationPane.furthest([D(member: "A", status: .sent)]))
        let r = ConversationPane.furthest([D(member: "A", status: .read), D(member: "B", status: .delivered), D(member: "C", status: .notDelivered)])
        XCTAssertEqual(r?.status, .read)
        XCTAssertEqual(r?.count, 1)
        XCTAssertEqual(r?.of, 3)
    }

    func testMembersAddRemoveAndLeaveInTheOpenGroup() throws {
        let model = FakeChatModel()
        let group = friends(model)
        _ = model.contact("Dana Scully")
        let view = makeView(model, rows: 24, columns: 100)
        view.open(group)
        run(view, "/members")
        let screen = view.frame()
        XCTAssertNotNil(screen.position(of: "Friends · 3 members"), screen.dump)
        XCTAssertNotNil(screen.position(of: "You (you) · admin"), screen.dump)
        XCTAssertNotNil(screen.position(of: "Bartholomew · added by You"), screen.dump)
        XCTAssertNotNil(screen.position(of: "Alice · checked in person"), screen.dump)
        XCTAssertNotNil(screen.position(of: "Gone · left · checked in person"), screen.dump)
        view.press(.escape)

        run(view, "/add Dana Scully")
        run(view, "/add Eve Frank")
        run(view, "/remove Alice")
        run(view, "/leave")
        XCTAssertEqual(model.groupChanges.map(\.1), [.add(["Dana Scully"]), .add(["Eve", "Frank"]), .remove("Alice"), .leave])
        XCTAssertTrue(model.groupChanges.allSatisfy { $0.0 == group })
        XCTAssertTrue(view.frame().line(22).contains("You left Friends"), view.frame().dump)

        // Outside a group they say what they need.
        view.open(model.id("Dana Scully"))
        run(view, "/members")
        XCTAssertTrue(view.frame().line(22).contains("Open a group first"), view.frame().dump)
        run(view, "/leave")
        XCTAssertEqual(model.groupChanges.count, 4)
    }

    /// `q` on a selected message (issue 31): the composer quotes it on a row of its own, what
    /// is sent next answers it, Esc with nothing typed lets it go; a reply shows its quote
    /// above its text, dim, cut to one line.
    func testQAnswersTheSelectedMessageAndAReplyShowsItsQuote() throws {
        let model = FakeChatModel()
        let group = friends(model)
        let view = makeView(model, rows: 24, columns: 100)
        view.open(group)
        guard case .message(let hello) = model.items[group]![1] else { return XCTFail() }
        view.state.focus = .composer
        view.press(.tab, .up, .up, .character("q"))
        XCTAssertEqual(view.state.focus, .composer)
        var screen = view.frame()
        let quoteRow = try XCTUnwrap(screen.text.firstIndex { $0.contains("| Replying to Bartholomew: hello there  (Esc: no reply)") }, screen.dump)
        XCTAssertEqual(quoteRow, Layout(view.state).composerRow, "the quote's row is the composer's first")
        view.type("sure")
        screen = view.frame()
        XCTAssertTrue(screen.text[quoteRow + 1].contains("sure"), screen.dump)
        view.press(.enter)
        XCTAssertEqual(model.sent.last?.content, .reply(Reply(target: hello.id, text: "sure")))
        XCTAssertNil(view.state.replyingTo, "one reply")
        view.type("and plain")
        view.press(.enter)
        XCTAssertEqual(model.sent.last?.content, .text("and plain"))

        // Esc with nothing typed: no reply; the next message is plain text.
        view.press(.tab, .up, .character("q"))
        XCTAssertNotNil(view.state.replyingTo)
        view.press(.escape)
        XCTAssertNil(view.state.replyingTo)
        XCTAssertFalse(view.frame().contains("Replying to"))

        // A reply in the conversation: its quote above its text, dim.
        let reply = model.addMessage(group, .incoming, "Yes, and a very long answer too")
        if case .message(var m) = model.items[group]!.last! {
            m.author = "Alice"
            m.content = .reply(Reply(target: hello.id, text: "Yes, and a very long answer too"))
            m.quote = .message(author: "Bartholomew", text: "hello there\nsecond line")
            model.items[group]![model.items[group]!.count - 1] = .message(m)
        }
        view.handle([.newMessage(conversation: group, id: reply, preview: "Yes")])
        screen = view.frame()
        let quote = try XCTUnwrap(screen.position(of: "| Bartholomew: hello there second line"), screen.dump)
        XCTAssertTrue(screen[quote.row, quote.column].style.dim)
        let answer = try XCTUnwrap(screen.position(of: "Yes, and a very long answer too"), screen.dump)
        XCTAssertEqual(answer.row, quote.row + 1)
        XCTAssertEqual(answer.column, quote.column)
        XCTAssertTrue(screen.text[quote.row].contains("Alice"), "the author and time stand on the quote's line: \(screen.dump)")
    }

    /// Reactions under their message ("👍 2  ❤️ 1"), and `i` says who.
    func testReactionsAreShownUnderTheirMessageAndDetailsSayWho() throws {
        let model = FakeChatModel()
        let group = friends(model)
        if case .message(var m) = model.items[group]![1] {
            m.reactions = [.init(from: "Alice", emoji: "👍"), .init(from: "You", emoji: "👍", status: .delivered),
                           .init(from: "Gone", emoji: "❤️")]
            model.items[group]![1] = .message(m)
        }
        let view = makeView(model, rows: 24, columns: 100)
        view.open(group)
        let screen = view.frame()
        let hello = try XCTUnwrap(screen.position(of: "hello there"), screen.dump)
        let summary = try XCTUnwrap(screen.position(of: "👍 2  ❤️ 1"), screen.dump)
        XCTAssertEqual(summary.row, hello.row + 1, "right under it")
        XCTAssertEqual(summary.column, hello.column)
        view.state.focus = .composer
        view.press(.tab, .up, .up, .character("i"))
        let details = view.frame().text.joined(separator: "\n")
        XCTAssertTrue(details.contains("Reactions"), details)
        for line in ["Alice               👍", "You                 👍", "Gone                ❤️"] {
            XCTAssertTrue(details.contains(line), line + "\n" + details)
        }
    }

    /// An edited message says "edited", this side's edit on its way says so ("edit Sending"),
    /// `i` lists each version with its time; a deleted one keeps its place, quietly.
    func testAnEditedMessageSaysSoAndDetailsListItsVersions() throws {
        let model = FakeChatModel()
        let group = friends(model)
        if case .message(var m) = model.items[group]![1] {
            m.content = .text("hello there, friends")
            m.versions = [.init(text: "hello there", at: m.at), .init(text: "hello there, friends", at: m.at + 60)]
            model.items[group]![1] = .message(m)
        }
        let view = makeView(model, rows: 24, columns: 100)
        view.open(group)
        var screen = view.frame()
        let text = try XCTUnwrap(screen.position(of: "hello there, friends"), screen.dump)
        let edited = try XCTUnwrap(screen.position(of: "edited"), screen.dump)
        XCTAssertEqual(edited.row, text.row + 1, "on the quiet line under it")
        XCTAssertTrue(screen[edited.row, edited.column].style.dim)
        view.state.focus = .composer
        view.press(.tab, .up, .up, .character("i"))
        let details = view.frame().text.joined(separator: "\n")
        XCTAssertTrue(details.contains("Versions"), details)
        XCTAssertTrue(details.contains("Original"), details)
        XCTAssertTrue(details.contains("Edit 1"), details)
        XCTAssertTrue(details.contains("  hello there, friends"), details)

        view.press(.escape)
        if case .message(var m) = model.items[group]![1] {
            m.content = .unsent
            m.versions = []
            m.pendingAction = .init(kind: .delete, status: .sending, id: MessageID(high: 9, low: 9))
            model.items[group]![1] = .message(m)
        }
        view.handle([.rowAdded(conversation: group)])
        screen = view.frame()
        let gone = try XCTUnwrap(screen.position(of: "This message was deleted."), screen.dump)
        XCTAssertTrue(screen[gone.row, gone.column].style.dim)
        let pending = try XCTUnwrap(screen.position(of: "delete Sending"), screen.dump)
        XCTAssertEqual(pending.row, gone.row + 1)
        XCTAssertNil(screen.position(of: "hello there"), screen.dump)
    }

    /// This side's edit that may not have arrived: the message says so in the danger colour
    /// with its Resend, and `r` sends the edit again (the message itself arrived).
    func testAnEditThatMayNotHaveArrivedIsResentWithR() throws {
        let model = FakeChatModel()
        let group = friends(model)
        let edit = MessageID(high: 7, low: 7)
        var m = MessageItem(id: MessageID(high: 7, low: 1), direction: .outgoing, content: .text("see you at eight"), status: .delivered,
                            resent: false, at: 1_700_000_000)
        m.versions = [.init(text: "see you at seven", at: m.at), .init(text: "see you at eight", at: m.at + 60)]
        m.pendingAction = .init(kind: .edit, status: .notDelivered, id: edit)
        model.items[group]!.append(.message(m))
        let view = makeView(model, rows: 24, columns: 100)
        view.open(group)
        let screen = view.frame()
        let note = try XCTUnwrap(screen.position(of: "edit Not delivered"), screen.dump)
        XCTAssertTrue(screen.text[note.row].contains("[r] Resend"), screen.dump)
        view.state.focus = .composer
        view.press(.tab)                         // the newest that offers Resend is selected
        view.press(.character("r"))
        XCTAssertEqual(model.resent.map(\.ids), [[edit]], "the edit, not the message that arrived")
    }
}
