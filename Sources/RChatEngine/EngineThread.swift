import Foundation
import RChatCore
import RChatNet

/// An engine running on a thread of its own, for a view in the same process (the TUI, the
/// demo's contact): `start()`, then `stop()` waits until it has saved its sessions and
/// closed its connections.
public final class EngineThread: @unchecked Sendable {
    public let engine: Engine
    private let finished = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var started = false
    private var stopped = false
    private var error: EngineError?

    private let whenFinished: (@Sendable (EngineError?) -> Void)?

    /// `whenFinished` is called on the engine's thread when `run` returns, with what ended
    /// it if it was not `stop()`.
    public init(engine: Engine, whenFinished: (@Sendable (EngineError?) -> Void)? = nil) {
        self.engine = engine
        self.whenFinished = whenFinished
    }

    /// Starts `engine.run` until `stop()`. Once only.
    public func start(name: String = "rchat-engine") {
        let go = lock.withLock { () -> Bool in
            guard !started else { return false }
            started = true
            return true
        }
        guard go else { return }
        let engine = self.engine
        let threadName = name
        let thread = Thread { [self] in
            ThreadName.setCurrent(threadName)
            do throws(EngineError) {
                try engine.run(seconds: nil)
            } catch let failure {
                lock.withLock { self.error = failure }
            }
            whenFinished?(failure)
            finished.signal()
        }
        thread.start()
    }

    /// What ended the engine early, if anything did.
    public var failure: EngineError? { lock.withLock { error } }

    /// Asks the engine to stop and waits up to `timeout` seconds for it. Returns false if it
    /// did not end in time. Safe to call more than once.
    @discardableResult
    public func stop(timeout: Double = 10) -> Bool {
        let wait = lock.withLock { () -> Bool in
            guard started, !stopped else { return false }
            stopped = true
            return true
        }
        guard wait else { return true }
        engine.stop()
        return finished.wait(timeout: .now() + timeout) == .success
    }
}
