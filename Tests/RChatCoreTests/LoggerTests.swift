import RChatCore
import Synchronization
import XCTest

final class LoggerTests: XCTestCase {
    /// Collects what a logger writes.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    func testLinesBelowTheThresholdAreDroppedAndNeverBuilt() {
        let lines = Lines()
        let log = Logger(threshold: .warning, prefix: "relay: ") { lines.append($0) }
        let built = Mutex(0)
        func text(_ s: String) -> String { built.withLock { $0 += 1 }; return s }
        log.error(text("disk full"))
        log.warning(text("limit reached"))
        log.note(text("connected"))
        log(text("also a note"))
        log.debug(text("frame 7"))
        XCTAssertEqual(lines.all, ["relay: disk full", "relay: limit reached"])
        XCTAssertEqual(built.withLock { $0 }, 2, "a dropped line's text is not even built")
        XCTAssertTrue(log.logs(.warning))
        XCTAssertFalse(log.logs(.note))
    }

    func testEveryLevelPassesAtDebugAndCallAsFunctionIsANote() {
        let lines = Lines()
        let everything = Logger(threshold: .debug) { lines.append($0) }
        for level in LogLevel.allCases { everything.log(level, level.rawValue) }
        XCTAssertEqual(lines.all, ["error", "warning", "note", "debug"])

        let notes = Lines()
        let log = Logger(threshold: .note) { notes.append($0) }
        log("plain")
        log.prefixed("sam: ")("from sam")
        log.prefixed("sam: ").debug("hidden")
        XCTAssertEqual(notes.all, ["plain", "sam: from sam"])
        XCTAssertEqual(LogLevel.allCases.sorted(), [.error, .warning, .note, .debug])
    }
}
