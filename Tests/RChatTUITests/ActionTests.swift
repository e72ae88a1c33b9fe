import XCTest
import RChatCore
@testable import RChatTUI

final class ActionTests: XCTestCase {
    func testResendASelectedMessage() {
        let (model, _) = samConversation()
        let nd = model.addMessage("Sam", .outgoing, "lost one", status: .notDelivered)
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.tab)                         // to the conversation: the newest is selected
        XCTAssertEqual(view.state.focus, .conversation)
        let screen = view.frame()
        XCTAssertEqual(screen[screen.position(of: "lost one")!.row, 0 + 21].character, "»", screen.dump)
        view.press(.character("r"))
        XCTAssertEqual(model.resent.map(\.ids), [[nd]])
        XCTAssertTrue(view.frame().line(22).contains("Resending 1 message."))
        // A delivered message has nothing to resend.
        view.press(.up, .character("r"))
        XCTAssertEqual(model.resent.count, 1)
        XCTAssertTrue(view.frame().line(22).contains("Nothing to resend: this message is Delivered."))
    }

    func testResendAllOfARow() {
        let (model, ids) = samConversation()
        let a = model.addMessage("Sam", .outgoing, "one", status: .notDelivered)
        model.addRow("Sam", "2 messages couldn't be read on Sam's phone.", resending: [ids["later"]!, a])
        model.addMessage("Sam", .incoming, "after the row")
        let view = makeView(model, open: "Sam")
        view.press(.tab)                         // the row is the newest item that offers Resend
        XCTAssertEqual(view.state.selected, 4)
        view.press(.character("r"))
        XCTAssertEqual(model.resent.count, 1)
        XCTAssertEqual(model.resent.first?.ids, [ids["later"]!, a])
        XCTAssertEqual(model.resent.first?.conversation, model.id("Sam"))
        XCTAssertTrue(view.frame().line(22).contains("Resending 2 messages."))
    }

    func testTabSelectsTheNewestResendableItemNotASelectionLeftFromBefore() {
        let (model, ids) = samConversation()
        let lost = model.addMessage("Sam", .outgoing, "lost one", status: .notDelivered)
        model.addMessage("Sam", .incoming, "newer, from Sam")
        let view = makeView(model, open: "Sam")
        _ = view.frame()
        view.press(.tab)
        XCTAssertEqual(view.state.selected, 3, "the newest item that offers Resend, not the newest item")
        // Select something else, leave the conversation without clearing it, come back.
        view.press(.up, .up, .tab, .tab, .tab)
        XCTAssertEqual(view.state.focus, .conversation)
        view.press(.character("r"))
        XCTAssertEqual(model.resent.map(\.ids), [[lost]], view.frame().dump)
        XCTAssertFalse(model.resent.contains { $0.ids.contains(ids["yes"]!) })

        // Nothing offers Resend: Tab selects nothing, so words typed next go to the composer
        // ("i think so" neither opens details nor loses "i "); Up selects the newest item.
        model.setStatus("Sam", lost, .delivered)
        let calm = makeView(model, open: "Sam")
        _ = calm.frame()
        calm.press(.tab)
        XCTAssertNil(calm.state.selected)
        calm.type("i think so")
        XCTAssertNil(calm.state.overlay)
        XCTAssertEqual(calm.state.composer.text, "i think so")
        calm.press(.tab, .up)
        XCTAssertEqual(calm.state.focus, .conversation)
        XCTAssertEqual(calm.state.selected, 4)
    }

    func testARowWhoseMessagesWereResentNoLongerOffersResend() {
        let (model, _) = samConversation()
        let a = model.addMessage("Sam", .outgoing, "one", status: .notDelivered)
        let text = "1 message couldn't be read on Sam's phone."
        model.addRow("Sam", text, resending: [a])
        let view = makeView(model, open: "Sam")
        XCTAssertTrue(view.frame().contains("[r] Resend"))
        view.press(.tab, .character("r"))
        XCTAssertEqual(model.resent.map(\.ids), [[a]])
        // The engine reports the new status; the store has withdrawn the row's offer.
        model.setStatus("Sam", a, .sending)
        model.withdrawResend("Sam", row: text)
        view.handle([.statusChanged(conversation: model.id("Sam"), id: a, status: .sending)])
        let screen = view.frame()
        XCTAssertTrue(screen.contains(text), screen.dump)
        XCTAssertFalse(screen.contains("[r] Resend"), screen.dump)
        // Nothing offers Resend any more: `r` on the row sends nothing.
        view.press(.character("r"))
        XCTAssertEqual(model.resent.count, 1)
    }

    /// A message rChat holds back for Sam's new device (seed 000, "Tap to resend"): its line
    /// says why, Tab selects it as one Resend can send, `r` sends it, and `i` says what happens.
    func testAMessageHeldForANewDeviceSaysWhyAndResendSendsIt() throws {
        let (model, _) = samConversation()
        let held = model.addMessage("Sam", .outgoing, "written before the new phone", status: .sending)
        let conversation = model.id("Sam")
        model.items[conversation] = model.items[conversation]?.map { item in
            guard case .message(var m) = item, m.id == held else { return item }
            m.peerName = "Sam"
            m.waiting = .newDevice
            return .message(m)
        }
        let view = makeView(model, open: "Sam")
        let screen = view.frame()
        // Too wide for one line beside the list: the hint goes under the reason.
        let reason = try XCTUnwrap(screen.text.firstIndex { $0.contains("waiting for you to verify Sam's new device") }, screen.dump)
        XCTAssertTrue(screen.text[reason + 1].trimmingCharacters(in: .whitespaces).hasSuffix("[r] Resend"), screen.dump)
        view.press(.tab)
        XCTAssertEqual(view.state.window?.item(at: view.state.selected ?? -1).flatMap { item -> MessageID? in
            if case .message(let m) = item { m.id } else { nil }
        }, held, "Tab selects what Resend can send")
        view.press(.character("i"))
        let details = view.frame().text.joined(separator: "\n")
        XCTAssertTrue(details.contains("Waiting for you to verify Sam's new device."), details)
        XCTAssertTrue(details.contains("r sends it to the new device now; entering Sam's code again sends"), details)
        view.press(.escape, .character("r"))
        XCTAssertEqual(model.resent.map(\.ids), [[held]])
        // Taken by the relay: it waits for nothing any more.
        model.setStatus("Sam", held, .sent)
        view.handle([.statusChanged(conversation: conversation, id: held, status: .sent)])
        XCTAssertFalse(view.frame().contains("waiting for you"), view.frame().dump)
    }

    func testDetailsShowTheTimeline() {
        let (model, ids) = samConversation()
        let id = ids["yes"]!
        let t: Int64 = 1_700_000_000
        model.timelines[id] = [TimelineEntry(step: .stored, at: t), TimelineEntry(step: .relayAcknowledged, at: t + 1),
                               TimelineEntry(step: .delivered, at: t + 5), TimelineEntry(step: .read, at: t + 65),
                               TimelineEntry(step: .resent, at: t + 70)]
        let view = makeView(model, open: "Sam")
        view.press(.tab, .up, .up, .character("i"))
        let screen = view.frame()
        let all = screen.text.joined(separator: "\n")
        XCTAssertTrue(all.contains("Message details"), screen.dump)
        XCTAssertTrue(all.contains("Status: Read"))
        for line in ["Stored              2023-11-14 22:13:20", "Relay acknowledged  2023-11-14 22:13:21",
                     "Delivered           2023-11-14 22:13:25", "Read                2023-11-14 22:14:25",
                     "Resent              2023-11-14 22:14:30"] {
            XCTAssertTrue(all.contains(line), line + "\n" + screen.dump)
        }
        XCTAssertNil(screen.cursor)
        view.press(.escape)
        XCTAssertNil(view.state.overlay)
        XCTAssertEqual(view.state.focus, .conversation)
    }

    func testHelpListsEveryKeyAndDemoCommands() {
        let (model, _) = samConversation()
        var called: [[String]] = []
        let demo = DemoCommand(name: "sam-offline", help: "Sam goes offline for a while") { args in
            called.append(args); return "Sam is offline."
        }
        let view = makeView(model, rows: 90, columns: 100, options: TUIOptions(demoCommands: [demo]), open: "Sam")
        view.press(.function(1))
        let all = view.frame().text.joined(separator: "\n")
        for entry in KeyMap.help { XCTAssertTrue(all.contains(entry.keys), entry.keys) }
        for entry in KeyMap.slashHelp { XCTAssertTrue(all.contains(entry.command), entry.command) }
        XCTAssertTrue(all.contains("/sam-offline"))
        XCTAssertTrue(all.contains("Sam goes offline for a while"))
        view.press(.escape)
        view.type("/sam-offline 30")
        view.press(.enter)
        XCTAssertEqual(called, [["30"]])
        XCTAssertTrue(view.frame().line(88).contains("Sam is offline."))
    }

    func testHelpScrollsOnASmallTerminal() {
        let (model, _) = samConversation()
        let view = makeView(model, rows: 10, columns: 40, open: "Sam")
        view.press(.function(1))
        let first = view.frame()
        XCTAssertTrue(first.contains("Help"))
        for _ in 0..<300 { view.press(.down) }
        let last = view.frame()
        XCTAssertNotEqual(first.text, last.text)
        XCTAssertTrue(last.text.joined().contains("Failed to send"), last.dump)
    }
}

/// A message may start with `?` (or any character): in the composer it types, and help is
/// F1 (or `?` outside the composer with nothing typed).
final class QuestionMarkTests: XCTestCase {
    func testAMessageStartingWithAQuestionMarkIsSentAsTyped() {
        let (model, _) = samConversation()
        let view = makeView(model, rows: 30, columns: 80, open: "Sam")
        view.type("?? anyone there")
        XCTAssertFalse(view.frame().contains("Help"), "? in the composer does not open the help")
        view.press(.enter)
        XCTAssertEqual(model.sent.last?.content, .text("?? anyone there"))
        view.press(.function(1))
        XCTAssertTrue(view.frame().contains("Help"))
    }
}
