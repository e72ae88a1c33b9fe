import Foundation
import XCTest
import RChatCore
@testable import RChatEngine

/// While `run` runs, the engine's state is its thread's: the checks at its entry points pass
/// there and report any other thread (debug builds); once it stops, it is anyone's again.
final class EngineThreadOwnerTests: RelayEngineTestCase {
    func testARunningEngineOwnsItsThreadAndLetsGoWhenItStops() throws {
        #if !DEBUG
        throw XCTSkip("the check is compiled out of release builds")
        #endif
        let address = try startRelay()
        let alice = try account("Alice", relay: address)
        let eventsSeen = Locked(0)
        var runner: EngineThread?
        let whileRunning = try ThreadOwner.violations {
            // Events are emitted on the engine thread: a check there is silent.
            runner = try startEngine(alice, logged: false) { engine in
                engine.onEvent = { _ in
                    engine.thread.check()
                    eventsSeen.withLock { $0 += 1 }
                }
            }
            try untilDeadline("the engine reports its connection", seconds: 10) { eventsSeen.withLock { $0 } > 0 }
            runner?.engine.thread.check()
        }
        XCTAssertEqual(whileRunning.map(\.owner), ["engine"], "only the test thread's call is reported")
        XCTAssertEqual(whileRunning.first?.function, "testARunningEngineOwnsItsThreadAndLetsGoWhenItStops()")

        XCTAssertEqual(runner?.stop(), true)
        let afterwards = ThreadOwner.violations { runner?.engine.thread.check() }
        XCTAssertEqual(afterwards, [], "a stopped engine is anyone's")
    }
}
