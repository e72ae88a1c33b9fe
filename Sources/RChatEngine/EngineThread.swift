import Foundation
import RChatCore
import RChatNet
import Synchronization

/// An engine running on a thread of its own, for a view in the same process (the TUI, the
/// demo's contact): `start()`, then `stop()` waits until it has saved its sessions and
/// closed its connections.
public final class EngineThread: Sendable {
    public let engine: Engine
    private let finished = DispatchSemaphore(value: 0)
    private struct State {
        var started = false
        var stopped = false
        var error: EngineError?
    }
    private let state = Mutex(State())

    private let whenFinished: (@Sendable (EngineError?) -> Void)?

    /// `whenFinished` is called on the engine's thread when `run` returns, with what ended
    /// it if it was not `stop()`.
    public init(engine: Engine, whenFinished: (@Sendable (EngineError?) -> Void)? = nil) {
        self.engine = engine
        self.whenFinished = whenFinished
    }

    /// Starts `engine.run` until `stop()`. Once only.
    public func start(name: String = "rchat-engine") {
        let go = state.withLock { state -> Bool in
            guard !state.started else { return false }
            state.started = true
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
                state.withLock { $0.error = failure }
            }
            whenFinished?(failure)
            finished.signal()
        }
        thread.start()
    }

    /// What ended the engine early, if anything did.
    public var failure: EngineError? { state.withLock { $0.error } }

    /// Asks the engine to stop and waits up to `timeout` seconds for it. Returns false if it
    /// did not end in time. Safe to call more than once.
    @discardableResult
    public func stop(timeout: Double = 10) -> Bool {
        let wait = state.withLock { state -> Bool in
            guard state.started, !state.stopped else { return false }
            state.stopped = true
            return true
        }
        guard wait else { return true }
        engine.stop()
        return finished.wait(timeout: .now() + timeout) == .success
    }
}
