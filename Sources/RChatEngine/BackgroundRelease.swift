import Foundation
import RChatNet

/// Lets go of what the engine thread is done with on a thread of its own. The arrivals of a
/// backlog are allocated on the relay reader threads; freeing them (thousands per batch,
/// each with its payload, code, header and text) took an eighth of the engine thread's
/// time, and a draining backlog waits on that thread alone.
///
/// `@unchecked Sendable`: `pending` is guarded by `condition`, an `NSCondition` because the
/// release thread waits on it (`Mutex` has no wait); the batches it holds need not be
/// Sendable, and nothing but the release thread touches one once it is handed over.
final class BackgroundRelease: @unchecked Sendable {
    static let shared = BackgroundRelease()

    private let condition = NSCondition()
    private var pending: [Any] = []
    private var started = false

    /// Smaller batches are let go where they are: handing them over costs more.
    static let smallestHandedOver = 64

    /// Hands `batch` over if it is large; the last reference to it goes on the release thread.
    func release<Element>(_ batch: [Element]) {
        guard batch.count >= Self.smallestHandedOver else { return }
        hand(batch)
    }

    private func hand(_ value: Any) {
        condition.lock()
        pending.append(value)
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.start()
        }
        condition.signal()
        condition.unlock()
    }

    private func run() {
        ThreadName.setCurrent("rchat-release")
        while true {
            condition.lock()
            while pending.isEmpty { condition.wait() }
            var taken: [Any] = []
            swap(&taken, &pending)
            condition.unlock()
            taken.removeAll()  // here, outside the lock
        }
    }
}
