import Foundation
import XCTest
import RChatCore
import RChatStore
import DesktopBusFixture
@testable import RChatEngine
#if canImport(Glibc)
import Glibc
#endif

/// The engine as the view sees it, over a real store (no relay: intents are
/// stored, events are posted by hand as the engine's thread would).
final class EngineChatModelTests: XCTestCase {
    var directory: URL!
    var model: EngineChatModel!
    var wakes = Counter()

    final class Counter: Sendable {
        private let n = Locked(0)
        func add() { n.withLock { $0 += 1 } }
        var value: Int { n.withLock { $0 } }
    }

    static let relay = "127.0.0.1:9/" + String(repeating: "A", count: 43)

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-model-\(UUID().uuidString)")
        let me = Locations(home: directory.path + "/me", deviceDirectory: directory.path + "/me-device")
        let sam = Locations(home: directory.path + "/sam", deviceDirectory: directory.path + "/sam-device")
        try AccountService.create(at: me, name: "Me", relay: RelayAddress(parsing: Self.relay))
        try AccountService.create(at: sam, name: "Sam", relay: RelayAddress(parsing: Self.relay))
        let account = try AccountService(locations: me)
        _ = try account.addContact(try AccountService(locations: sam).contactCode(), name: nil)
        let wakes = self.wakes
        model = try EngineChatModel(account: account, wake: { wakes.add() })
    }

    override func tearDown() {
        model = nil
        try? FileManager.default.removeItem(at: directory)
    }

    var samID: ContactID { get throws { try model.account.contact(named: "Sam").id } }
    /// Sam's conversation, as the view picks it.
    var sam: ConversationID { get throws { try samID.conversation } }

    func incoming(_ text: String) throws -> MessageID {
        let id = MessageID.random()
        try model.account.store.insertIncoming(contact: try samID, id: id, content: .text(text), at: 100)
        return id
    }

    /// `/search` through the model: hits whose index is where `page` finds the message; a
    /// conversation gone meanwhile is one line for the status bar.
    func testSearchFindsMessagesWherePagingFindsThem() throws {
        let sam = try sam
        try model.send(to: sam, content: .text("first umbrella"))
        for n in 0..<30 { try model.send(to: sam, content: .text("filler \(n)")) }
        let found = try incoming("umbrella, again")
        let hits = try model.search(SearchQuery("umbrella"), in: sam)
        XCTAssertEqual(hits.count, 2)
        XCTAssertEqual(hits.first?.message, found)
        let total = model.itemCount(of: sam)
        for hit in hits {
            let page = model.page(of: sam, before: total - 1 - hit.index, limit: 1)
            guard case .message(let m)? = page.first else { return XCTFail("no message at \(hit.index)") }
            XCTAssertEqual(m.id, hit.message)
        }
        XCTAssertEqual(try model.search(SearchQuery("umbrella"), in: nil).count, 2)
        try model.delete(sam)
        XCTAssertThrowsError(try model.search(SearchQuery("umbrella"), in: sam)) {
            XCTAssertEqual(($0 as? ChatModelError)?.description, "That conversation no longer exists (see rchat contacts).")
        }
        XCTAssertEqual(try model.search(SearchQuery("umbrella"), in: nil), [])
    }

    func testPagesCountFromTheNewestAndSendWakesTheEngine() throws {
        let sam = try sam
        for n in 0..<10 { try model.send(to: sam, content: .text("m\(n)")) }
        XCTAssertEqual(wakes.value, 10)
        XCTAssertEqual(model.itemCount(of: sam), 10)
        let texts = { (items: [ConversationItem]) in items.compactMap { item -> String? in
            if case .message(let m) = item { return m.text } else { return nil }
        } }
        XCTAssertEqual(texts(model.page(of: sam, before: nil, limit: 3)), ["m7", "m8", "m9"])
        XCTAssertEqual(texts(model.page(of: sam, before: 3, limit: 3)), ["m4", "m5", "m6"], "before: skip the newest 3")
        XCTAssertEqual(texts(model.page(of: sam, before: 8, limit: 5)), ["m0", "m1"])
        XCTAssertEqual(model.page(of: ConversationID(999), before: nil, limit: 3), [])
        XCTAssertEqual(model.itemCount(of: ConversationID(999)), 0)
        XCTAssertThrowsError(try model.send(to: sam, content: .text("   "))) { error in
            XCTAssertEqual((error as? ChatModelError)?.description, "An empty message is not sent.")
        }
    }

    func testTimelineNamesEachStepAndAResendIsResent() throws {
        let sam = try sam
        try model.send(to: sam, content: .text("hello"))
        guard case .message(let m)? = model.page(of: sam, before: nil, limit: 1).first else { return XCTFail("no message") }
        let store = model.account.store, samRow = try samID
        try store.raiseStatus(contact: samRow, id: m.id, event: .relayAcknowledged, at: 200)
        try store.raiseStatus(contact: samRow, id: m.id, event: .peerCouldNotRead, at: 300)
        try model.resend(in: sam, messages: [m.id])
        XCTAssertEqual(model.drainEvents(), [.statusChanged(conversation: sam, id: m.id, status: .sending)],
                       "the view learns the resent message is Sending again")
        try store.raiseStatus(contact: samRow, id: m.id, event: .deliveredReceipt, at: 500)
        try store.raiseStatus(contact: samRow, id: m.id, event: .readReceipt, at: 600)
        XCTAssertEqual(model.timeline(of: sam, message: m.id).map(\.step),
                       [.stored, .relayAcknowledged, .status(.notDelivered), .resent, .delivered, .read])
        XCTAssertEqual(model.timeline(of: sam, message: m.id).last?.at, 600)
        XCTAssertEqual(model.timeline(of: sam, message: try incoming("hi")), [], "incoming messages have no status steps")
    }

    /// Resend from the view on messages that arrived meanwhile (a row still on screen):
    /// those are left out, and with nothing left the answer is in words, never an id.
    func testResendFromTheViewLeavesOutWhatArrivedAndSaysSoInWords() throws {
        let sam = try sam
        try model.send(to: sam, content: .text("lost"))
        try model.send(to: sam, content: .text("arrived"))
        let ids = model.page(of: sam, before: nil, limit: 2).compactMap { item -> MessageID? in
            if case .message(let m) = item { return m.id } else { return nil }
        }
        let store = model.account.store, samRow = try samID
        for id in ids {
            try store.raiseStatus(contact: samRow, id: id, event: .relayAcknowledged, at: 200)
            try store.raiseStatus(contact: samRow, id: id, event: .peerCouldNotRead, at: 300)
        }
        try store.raiseStatus(contact: samRow, id: ids[1], event: .deliveredReceipt, at: 400)
        try model.resend(in: sam, messages: ids)
        XCTAssertEqual(model.drainEvents(), [.statusChanged(conversation: sam, id: ids[0], status: .sending)], "only the one that did not arrive")
        try store.raiseStatus(contact: samRow, id: ids[0], event: .deliveredReceipt, at: 500)
        XCTAssertThrowsError(try model.resend(in: sam, messages: ids)) { error in
            let text = (error as? ChatModelError)?.description ?? ""
            XCTAssertEqual(text, "Nothing to resend: the messages arrived.")
            XCTAssertFalse(ids.contains { text.contains($0.hex) })
        }
    }

    func testMarkShownReadsOnlyThoseAndOwesTheirReadReceipts() throws {
        let a = try incoming("a"), b = try incoming("b")
        XCTAssertEqual(model.conversations().first?.unread, 2)
        model.markShown(in: try sam, messages: [a])
        XCTAssertEqual(model.conversations().first?.unread, 1)
        XCTAssertEqual(try model.account.store.readReceiptsOwed(contact: try samID, limit: 10), [a])
        XCTAssertEqual(model.drainEvents(), [.conversationsChanged])
        XCTAssertEqual(wakes.value, 1)
        model.markShown(in: try sam, messages: [a])
        XCTAssertEqual(wakes.value, 1, "nothing new read: no wake-up")
        _ = b
    }

    func testEngineEventsWakeThePollAndDrainInOrder() throws {
        var fds = [pollfd(fd: model.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
        XCTAssertEqual(poll(&fds, 1, 0), 0, "nothing queued yet")
        XCTAssertEqual(model.connection(), .connecting)
        let sink = model.eventSink
        let posted = expectation(description: "posted from another thread")
        Thread {
            for n in 0..<100 { sink(.rowAdded(conversation: ConversationID(Int64(n)))) }
            sink(.connectionChanged(.online))
            posted.fulfill()
        }.start()
        wait(for: [posted], timeout: 5)
        XCTAssertEqual(poll(&fds, 1, 1000), 1, "readable once events wait")
        let events = model.drainEvents()
        XCTAssertEqual(events.count, 101)
        XCTAssertEqual(events.first, .rowAdded(conversation: ConversationID(0)))
        XCTAssertEqual(model.connection(), .online)
        fds[0].revents = 0
        XCTAssertEqual(poll(&fds, 1, 0), 0, "drained: not readable any more")
        XCTAssertEqual(model.drainEvents(), [])
    }

    func testAddContactMuteBlockDeleteAndTheirErrors() throws {
        XCTAssertThrowsError(try model.addContact(code: "not a code"))
        let sam = try sam
        try model.setMuted(sam, true)
        XCTAssertEqual(model.conversations().first?.state, .muted)
        try model.setBlocked(sam, true)
        XCTAssertEqual(model.conversations().first?.state, .blocked)
        try model.delete(sam)
        XCTAssertEqual(model.conversations(), [])
        XCTAssertThrowsError(try model.setMuted(sam, false)) { error in
            XCTAssertTrue("\(error)".contains("That conversation no longer exists"), "\(error)")
        }
        XCTAssertTrue(model.myCode().hasPrefix("rchat-"), model.myCode())
    }

    /// Seed 001: the view's answer to "Show desktop alerts?" is the store's, the one
    /// `rchat settings desktop-alerts` shows and changes, and the alert center reads.
    /// The view's drafts go to the store (the engine woken as for the view's other writes),
    /// come back in a new model (a restart), and a deleted conversation's draft is gone and
    /// refused.
    func testDraftsAreKeptAcrossModelsAndGoWithTheConversation() throws {
        let sam = try sam, samID = try samID
        XCTAssertNil(try model.draft(of: sam))
        try model.setDraft(Draft(text: "see you", cursor: 3), for: sam)
        XCTAssertEqual(wakes.value, 1, "the engine takes it as the view's own write")
        let restarted = try EngineChatModel(account: try AccountService(locations: model.account.locations), wake: {})
        XCTAssertEqual(try restarted.draft(of: sam), Draft(text: "see you", cursor: 3))
        try restarted.delete(sam)
        XCTAssertNil(try model.account.store.draft(contact: samID))
        XCTAssertThrowsError(try model.setDraft(Draft(text: "too late", cursor: 0), for: sam)) { error in
            XCTAssertEqual("\(error)", "That conversation no longer exists (see rchat contacts).")
        }
        XCTAssertThrowsError(try model.draft(of: sam))
    }

    /// Engine time that moves only when told.
    final class StepClock: MonotonicClock {
        private let now = Locked(0.0)
        func seconds() -> Double { now.withLock { $0 } }
        func advance(_ by: Double) { now.withLock { $0 += by } }
    }

    /// A draft written through the model is the view's own write to the running engine; it
    /// does not come back as a change made elsewhere (which has the view read its list and
    /// window again). The same row written behind the engine's back does.
    func testADraftWriteDoesNotComeBackToTheViewAsAChangeElsewhere() throws {
        let sam = try sam, samID = try samID
        let clock = StepClock()
        var environment = EngineEnvironment.system
        environment.monotonic = clock
        environment.listensForWakeUps = false
        let engine = try Engine(account: AccountService(locations: model.account.locations), environment: environment) { _ in }
        let view = try EngineChatModel(account: model.account, engine: engine)
        try engine.begin()
        defer { engine.shutDown() }
        func changedElsewhere() throws -> Bool {
            clock.advance(Double(Engine.storeLookInterval) + 1)
            try engine.step()
            return view.drainEvents().contains(ChatEvent.changedElsewhere)
        }
        XCTAssertFalse(try changedElsewhere())
        try view.setDraft(Draft(text: "typing", cursor: 6), for: sam)
        XCTAssertFalse(try changedElsewhere(), "the view's own write")
        try model.account.store.setDraft(Draft(text: "behind its back", cursor: 0), contact: samID, at: 1)
        XCTAssertTrue(try changedElsewhere(), "the check that tells the two apart works")
    }

    func testAlertPermissionIsStoredThroughTheAlertCenter() throws {
        let settings = { [model] in Dictionary(uniqueKeysWithValues: try model!.account.settingsList())[.desktopAlerts] }
        XCTAssertFalse(model.alertPermissionAsked)
        XCTAssertEqual(try settings(), "not asked yet")
        model.setAlertPermission(true)
        XCTAssertTrue(model.alertPermissionAsked)
        XCTAssertTrue(try AlertCenter(account: model.account).desktopAllowed)
        XCTAssertEqual(try settings(), "on")
        model.setAlertPermission(false)
        XCTAssertTrue(model.alertPermissionAsked, "refused is an answer too: never asked again")
        XCTAssertFalse(try AlertCenter(account: model.account).desktopAllowed)
        XCTAssertEqual(try settings(), "off")
        try model.account.setSetting("desktop-alerts", "on")
        XCTAssertTrue(model.alertPermissionAsked)
        XCTAssertTrue(try AlertCenter(account: model.account).desktopAllowed)
        XCTAssertTrue(model.drainEvents().isEmpty, "no event: nothing on screen changes")
    }
    /// Issue 26: what the view says of the desktop (`ViewSettings.desktop`, `whileOpen`),
    /// and its desktop alerts: only where there is a desktop and they are allowed, grouped as
    /// one check (five each, more one summary), recorded so never twice, never for the
    /// conversation on screen (a notification service on a private session bus records each
    /// alert).
    func testDesktopAlertsWhileTheViewRuns() throws {
        let sam = try sam
        let desktop = try PrivateDesktop(directory: directory.path + "/bus")
        defer { desktop.stop() }
        func calls() -> [String] {
            desktop.notifications.map { "\($0.appName): \($0.title) \($0.body)" + ($0.actions.isEmpty ? "" : " \($0.actions)") }
        }
        XCTAssertEqual(model.viewSettings().desktop, .unavailable, "no desktop here")
        XCTAssertEqual(model.viewSettings().whileOpen, .unfocused)
        model.desktop = .desktop(bus: desktop.address)
        XCTAssertEqual(model.viewSettings().desktop, .notAllowed)
        let first = try incoming("one")
        model.alertOnDesktop([(sam, first)], onScreen: nil)
        XCTAssertEqual(calls(), [], "not allowed")

        model.setAlertPermission(true)
        XCTAssertEqual(model.viewSettings().desktop, .allowed)
        let three = [first] + (try (2...3).map { try incoming("m\($0)") })
        model.alertOnDesktop(three.map { (sam, $0) }, onScreen: nil)
        XCTAssertEqual(calls(), Array(repeating: "rChat: Sam New message", count: 3))
        model.alertOnDesktop(three.map { (sam, $0) }, onScreen: nil)
        XCTAssertEqual(calls().count, 3, "never twice")
        let seven = try (1...7).map { try incoming("burst \($0)") }
        model.alertOnDesktop(seven.map { (sam, $0) }, onScreen: nil)
        XCTAssertEqual(calls().last, "rChat: rChat 7 new messages")
        XCTAssertEqual(calls().count, 4)
        model.alertOnDesktop([(sam, try incoming("on screen"))], onScreen: sam)
        XCTAssertEqual(calls().count, 4, "never for the conversation on screen")

        try model.account.setSetting("alerts-while-open", "off")
        XCTAssertEqual(model.viewSettings().whileOpen, .off)
        try model.account.store.setSetting("alerts-while-open", "sometimes")
        XCTAssertEqual(model.viewSettings().whileOpen, .off, "unreadable: the quieter choice")
        XCTAssertThrowsError(try AlertCenter(account: model.account).whileOpen)
    }
}
