import Foundation
import XCTest
import RChatCore
import RChatMedia
@testable import RChatTUI

/// Status-bar notices about something under way go when it ends: "Sending photo.png." once
/// that message left Sending, "Playing the voice message" once the player exited, a demo
/// command's "Sam is reinstalling…" once its work is done. Any key still dismisses any.
final class NoticeTests: FolderTestCase {
    // MARK: The transitions, every one

    func testEveryLifetimeUnderEveryEvent() {
        let id = MessageID.random(), other = MessageID.random()
        let task = DemoTask(), finished = DemoTask()
        finished.finish()
        let running = Playback(Self.process(["/bin/sleep", "30"]))
        let ended = Playback(Self.process(["/bin/true"]))
        defer { running.stop() }
        XCTAssertTrue(eventually { ended.hasEnded })
        func notice(_ lasts: Notice.Lasts) -> Notice { Notice(text: "x", isError: false, lasts: lasts) }

        let statuses = MessageStatus.allCases
        let lifetimes: [Notice.Lasts] = [.untilKey, .sending(id), .playing(running), .playing(ended), .demo(task), .demo(finished)]
        for lasts in lifetimes {
            let n = notice(lasts)
            XCTAssertNil(n.after(.key), "a key dismisses every notice: \(lasts)")
            for status in statuses {
                let own: Notice? = lasts == .sending(id) && status != .sending ? nil : n
                XCTAssertEqual(n.after(.status(id, status)), own, "\(lasts) after \(id) went \(status)")
                XCTAssertEqual(n.after(.status(other, status)), n, "another message's status: \(lasts) stays")
            }
            let gone = lasts == .playing(ended) || lasts == .demo(finished)
            XCTAssertEqual(n.after(.looked), gone ? nil : n, "\(lasts) when looked at")
        }
        XCTAssertEqual(lifetimes.map { notice($0).needsLooking }, [false, false, true, true, true, true])
        XCTAssertNotEqual(Notice.Lasts.demo(task), .demo(DemoTask()), "tasks are told apart by identity")
        XCTAssertFalse(task.isFinished)
        XCTAssertFalse(running.hasEnded)
    }

    private static func process(_ arguments: [String]) -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: arguments[0])
        p.arguments = Array(arguments.dropFirst())
        try? p.run()
        return p
    }

    // MARK: In the view

    func testSendingAPhotoGoesOnceItWasSent() throws {
        let home = folder("home")
        let path = home + "/beach.png"
        _ = FileManager.default.createFile(atPath: path, contents: Data(MediaViewTests.redOverBluePNG))
        let model = FakeChatModel()
        model.contact("Sam")
        let earlier = model.addMessage("Sam", .outgoing, "earlier", status: .sending)
        let view = makeView(model, open: "Sam")
        view.type("/photo " + path)
        view.press(.enter)
        let id = try XCTUnwrap(model.filesSentIDs.first)
        XCTAssertEqual(view.state.notice, Notice(text: "Sending beach.png.", isError: false, lasts: .sending(id)))
        XCTAssertTrue(view.frame().line(22).contains("Sending beach.png."), view.frame().dump)
        XCTAssertNil(view.pollMilliseconds, "nothing to look at: the engine's event ends it")

        let sam = model.id("Sam")
        view.handle([.statusChanged(conversation: sam, id: earlier, status: .sent)])
        view.handle([.statusChanged(conversation: sam, id: id, status: .sending)])
        XCTAssertTrue(view.frame().line(22).contains("Sending beach.png."), "still sending: \(view.frame().dump)")
        view.handle([.statusChanged(conversation: sam, id: id, status: .sent)])
        let screen = view.frame()
        XCTAssertNil(view.state.notice)
        XCTAssertFalse(screen.line(22).contains("Sending"), screen.dump)
        XCTAssertTrue(screen.line(22).contains("F1 help"), "the hint again: \(screen.dump)")
    }

    func testFailingToSendEndsItToo() throws {
        let home = folder("home")
        let path = home + "/notes.txt"
        _ = FileManager.default.createFile(atPath: path, contents: Data("notes".utf8))
        let model = FakeChatModel()
        model.contact("Sam")
        model.contact("Alice")
        let view = makeView(model, open: "Sam")
        view.type("/file " + path)
        view.press(.enter)
        let id = try XCTUnwrap(model.filesSentIDs.first)
        XCTAssertEqual(view.state.notice?.text, "Sending notes.txt.")
        // Events for a conversation that is not open still end it.
        view.handle([.statusChanged(conversation: model.id("Alice"), id: MessageID.random(), status: .sent)])
        XCTAssertEqual(view.state.notice?.text, "Sending notes.txt.")
        view.handle([.statusChanged(conversation: model.id("Sam"), id: id, status: .failedToSend)])
        XCTAssertNil(view.state.notice, "Failed to send is no longer Sending")
    }

    func testPlayingGoesWhenThePlayerEnds() throws {
        let home = folder("home"), bin = folder("bin"), dir = folder("voice")
        let wav = dir + "/tone.wav", ogg = dir + "/tone.ogg"
        _ = FileManager.default.createFile(atPath: wav, contents: MediaViewTests.toneWAV(seconds: 1.2))
        _ = try VoiceNote.encode(wav: wav, to: ogg)
        let started = dir + "/started", release = dir + "/release"
        defer { _ = FileManager.default.createFile(atPath: release, contents: nil) }   // the player ends whatever happens
        writeScript(bin + "/aplay", "touch \(started); while [ ! -e \(release) ]; do sleep 0.02; done")
        let model = FakeChatModel()
        model.contact("Sam")
        model.addAttachment("Sam", .incoming, .voice, name: "voice-message.ogg", size: 10, transfer: .complete(path: ogg))
        let view = makeView(model, options: TUIOptions(timeZone: utc, draftDirectory: home, environment: ["PATH": bin]), open: "Sam")
        view.state.focus = .conversation
        view.state.selected = 0
        _ = view.frame()
        XCTAssertTrue(eventually { view.voiceLengths.idle }, "its length read off the UI thread")
        view.press(.character("p"))
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: started) }, "the player runs")
        XCTAssertTrue(view.frame().line(22).contains("Playing the voice message (0:01)."), view.frame().dump)
        XCTAssertEqual(view.pollMilliseconds, 250, "the backend comes back to look at the player")
        if case .playing? = view.state.notice?.lasts {} else { XCTFail("\(String(describing: view.state.notice))") }

        _ = FileManager.default.createFile(atPath: release, contents: nil)
        XCTAssertTrue(eventually { !view.frame().line(22).contains("Playing") }, "gone once it ended: \(view.frame().dump)")
        XCTAssertNil(view.state.notice)
        XCTAssertNil(view.pollMilliseconds)
    }

    func testADemoCommandsLineStaysUntilItsWorkIsDone() {
        let model = FakeChatModel()
        model.contact("Sam")
        let task = DemoTask()
        let demo = DemoCommand(name: "reinstall", help: "Sam reinstalls", running: { _ in
            DemoReply(text: "Sam is reinstalling rChat on the same phone (export, delete, import)…", task: task)
        })
        let quick = DemoCommand(name: "offline", help: "Sam goes offline") { _ in "Sam is offline." }
        let view = makeView(model, options: TUIOptions(demoCommands: [demo, quick], timeZone: utc), open: "Sam")
        view.type("/reinstall")
        view.press(.enter)
        XCTAssertTrue(view.frame().line(22).contains("Sam is reinstalling rChat"), view.frame().dump)
        XCTAssertTrue(view.frame().line(22).contains("Sam is reinstalling rChat"), "frames do not end it while it runs")
        XCTAssertEqual(view.pollMilliseconds, 250)
        task.finish()
        XCTAssertFalse(view.frame().line(22).contains("reinstalling"), view.frame().dump)
        XCTAssertNil(view.state.notice)
        XCTAssertNil(view.pollMilliseconds)

        view.type("/offline")
        view.press(.enter)
        XCTAssertEqual(view.state.notice, Notice(text: "Sam is offline.", isError: false), "a plain line lasts until a key")
        XCTAssertTrue(view.frame().line(22).contains("Sam is offline."))
        XCTAssertNil(view.pollMilliseconds)
    }
}
