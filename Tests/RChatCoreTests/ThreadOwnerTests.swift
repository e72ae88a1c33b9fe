import Foundation
import RChatCore
import XCTest

/// The confinement check: silent on the owning thread, before the claim and after the
/// release; a report naming the owner and the call from any other thread.
final class ThreadOwnerTests: XCTestCase {
    override func setUpWithError() throws {
        #if !DEBUG
        throw XCTSkip("the check is compiled out of release builds")
        #endif
    }

    /// Runs `body` on a new thread and waits for it to end.
    private func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        Thread { body(); done.signal() }.start()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "the other thread did not finish")
    }

    func testACallOffTheClaimedThreadIsReportedWithTheOwnerAndTheCall() {
        let owner = ThreadOwner("engine")
        let violations = ThreadOwner.violations {
            owner.claim()
            owner.check()
            onAnotherThread { owner.check() }
            owner.check()
        }
        XCTAssertEqual(violations.count, 1, "only the call off the owning thread")
        XCTAssertEqual(violations.first?.owner, "engine")
        XCTAssertEqual(violations.first?.function, "testACallOffTheClaimedThreadIsReportedWithTheOwnerAndTheCall()")
        XCTAssertTrue(violations.first?.file.hasSuffix("ThreadOwnerTests.swift") ?? false)
        XCTAssertTrue(violations.first?.description.contains("ran off the engine thread") ?? false)
    }

    func testAnyThreadPassesBeforeTheClaimAndAfterTheRelease() {
        let owner = ThreadOwner("view")
        let violations = ThreadOwner.violations {
            onAnotherThread { owner.check() }
            owner.claim()
            owner.release()
            onAnotherThread { owner.check() }
        }
        XCTAssertEqual(violations, [])
    }

    func testAClaimMovesTheOwnershipToTheClaimingThread() {
        let owner = ThreadOwner("event loop")
        let violations = ThreadOwner.violations {
            owner.claim()
            onAnotherThread {
                owner.claim()
                owner.check()
            }
            owner.check()
        }
        XCTAssertEqual(violations.map(\.owner), ["event loop"], "the test thread is no longer the owner")
    }
}
