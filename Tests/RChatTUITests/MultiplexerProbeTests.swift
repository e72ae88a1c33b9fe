import Foundation
import XCTest
import RChatCore
@testable import RChatTUI

/// What tmux and screen say of the view's window (`MultiplexerProbe`), read from their answers.
final class MultiplexerProbeTests: XCTestCase {
    func testTmuxAnswers() {
        XCTAssertEqual(MultiplexerProbe.tmuxAnswer("1 1\n"), .attached)
        XCTAssertEqual(MultiplexerProbe.tmuxAnswer("2 1"), .attached)
        XCTAssertEqual(MultiplexerProbe.tmuxAnswer("0 1\n"), .detached, "nobody attached (tmux new-session -d)")
        XCTAssertEqual(MultiplexerProbe.tmuxAnswer("1 0\n"), .detached, "another window of the session is shown")
        XCTAssertEqual(MultiplexerProbe.tmuxAnswer(""), .unknown)
        XCTAssertEqual(MultiplexerProbe.tmuxAnswer("no server running"), .unknown)
    }

    func testScreenAnswers() {
        let detached = "There is a screen on:\n\t4242.pts-1.host\t(12/01/26 13:00:00)\t(Detached)\n1 Socket in /run/screen/S-me.\n"
        XCTAssertEqual(MultiplexerProbe.screenAnswer(detached, session: "4242.pts-1.host"), .detached)
        let attached = "There is a screen on:\n\t4242.pts-1.host\t(Attached)\n1 Socket in /run/screen/S-me.\n"
        XCTAssertEqual(MultiplexerProbe.screenAnswer(attached, session: "4242.pts-1.host"), .attached)
        XCTAssertEqual(MultiplexerProbe.screenAnswer("\t4242.x\t(Multi, attached)\n", session: "4242.x"), .attached)
        XCTAssertEqual(MultiplexerProbe.screenAnswer("No Sockets found in /run/screen/S-me.\n", session: "4242.x"), .unknown)
    }

    func testOutsideAMultiplexerNothingIsAsked() {
        // A folder that does not exist: no program on that PATH, no server at that socket.
        let nowhere = FileManager.default.temporaryDirectory.appendingPathComponent("rchat-nowhere-\(UUID().uuidString)").path
        XCTAssertEqual(MultiplexerProbe.ask(environment: ["PATH": nowhere]), .none)
        XCTAssertEqual(MultiplexerProbe.ask(environment: ["TMUX": "", "STY": ""]), .none)
        XCTAssertEqual(MultiplexerProbe.ask(environment: ["TMUX": "\(nowhere)/socket,1,0", "PATH": nowhere]), .unknown, "no tmux to ask")
    }
}
