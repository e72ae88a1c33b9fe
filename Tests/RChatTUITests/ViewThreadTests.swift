import Foundation
import RChatCore
import XCTest
@testable import RChatTUI

/// The view belongs to the thread that made it (the UI thread): driving it from another
/// thread is reported in debug builds.
final class ViewThreadTests: XCTestCase {
    func testDrivingTheViewFromAnotherThreadIsReported() throws {
        #if !DEBUG
        throw XCTSkip("the check is compiled out of release builds")
        #endif
        let (model, _) = samConversation()
        let view = makeView(model, open: "Sam")
        let violations = ThreadOwner.violations {
            _ = view.frame()
            view.handle(.character("h"))
            // What a view handed to an engine thread by mistake would do: the test thread
            // waits meanwhile, so the two never touch the view at once.
            nonisolated(unsafe) let elsewhere = view
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = elsewhere.frame()
                elsewhere.handle([.connectionChanged(.online)])
                done.signal()
            }.start()
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
            view.resize(rows: 30, columns: 90)
        }
        XCTAssertEqual(violations.map(\.owner), ["view", "view"], "the thread that made the view drives it unreported")
        XCTAssertEqual(violations.map(\.function), ["frame()", "handle(_:)"])
    }
}
