import XCTest
import RChatCore
@testable import RChatTUI

/// What tmux and screen say of the view's window (`Multiplexer`), read from their answers.
final class MultiplexerTests: XCTestCase {
    func testTmuxAnswers() {
        XCTAssertEqual(Multiplexer.tmuxAnswer("1 1\n"), .attached)
        XCTAssertEqual(Multiplexer.tmuxAnswer("2 1"), .attached)
        XCTAssertEqual(Multiplexer.tmuxAnswer("0 1\n"), .detached, "nobody attached (tmux new-session -d)")
        XCTAssertEqual(Multiplexer.tmuxAnswer("1 0\n"), .detached, "another window of the session is shown")
        XCTAssertEqual(Multiplexer.tmuxAnswer(""), .unknown)
        XCTAssertEqual(Multiplexer.tmuxAnswer("no server running"), .unknown)
    }

    func testScreenAnswers() {
        let detached = "There is a screen on:\n\t4242.pts-1.host\t(12/01/26 13:00:00)\t(Detached)\n1 Socket in /run/screen/S-me.\n"
        XCTAssertEqual(Multiplexer.screenAnswer(detached, session: "4242.pts-1.host"), .detached)
        let attached = "There is a screen on:\n\t4242.pts-1.host\t(Attached)\n1 Socket in /run/screen/S-me.\n"
        XCTAssertEqual(Multiplexer.screenAnswer(attached, session: "4242.pts-1.host"), .attached)
        XCTAssertEqual(Multiplexer.screenAnswer("\t4242.x\t(Multi, attached)\n", session: "4242.x"), .attached)
        XCTAssertEqual(Multiplexer.screenAnswer("No Sockets found in /run/screen/S-me.\n", session: "4242.x"), .unknown)
    }

    func testOutsideAMultiplexerNothingIsAsked() {
        XCTAssertEqual(Multiplexer.ask(environment: ["PATH": "/nonexistent"]), .none)
        XCTAssertEqual(Multiplexer.ask(environment: ["TMUX": "", "STY": ""]), .none)
        XCTAssertEqual(Multiplexer.ask(environment: ["TMUX": "/tmp/x,1,0", "PATH": "/nonexistent"]), .unknown, "no tmux to ask")
    }
}
