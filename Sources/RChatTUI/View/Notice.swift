import Foundation
import Glibc
import RChatCore
import Synchronization

/// A line in the status bar saying what just happened (an error, a confirmation), and
/// what keeps it true: a key dismisses any notice, and one about something under way goes
/// by itself when that ends, so the bar never says "Sending photo.png." once it was sent.
public struct Notice: Equatable, Sendable {
    public var text: String
    public var isError: Bool
    public var lasts: Lasts = .untilKey

    public init(text: String, isError: Bool, lasts: Lasts = .untilKey) {
        self.text = text; self.isError = isError; self.lasts = lasts
    }

    /// What the notice speaks of, which ends it when it ends.
    public enum Lasts: Equatable, Sendable {
        /// A confirmation or an error: true until the user does something else.
        case untilKey
        /// "Sending photo.png.": until that message is no longer Sending (sent, or failed).
        case sending(MessageID)
        /// "Playing the voice message": until the player exits.
        case playing(Playback)
        /// A demo command's "Sam is reinstalling…": until the demo's work is done.
        case demo(DemoTask)
    }

    /// What can end a notice.
    public enum Event: Equatable, Sendable {
        /// The user pressed a key.
        case key
        /// A message's status changed (the engine's `statusChanged`).
        case status(MessageID, MessageStatus)
        /// The backend looked again at what runs (a frame): players that exited, demo work
        /// that finished.
        case looked
    }

    /// The notice after `event`: itself while what it says is still true, else nil.
    public func after(_ event: Event) -> Notice? {
        switch (event, lasts) {
        case (.key, _): return nil
        case (.status(let id, let status), .sending(let sending)) where id == sending && status != .sending: return nil
        case (.looked, .playing(let playback)) where playback.hasEnded: return nil
        case (.looked, .demo(let task)) where task.isFinished: return nil
        default: return self
        }
    }

    /// Whether it ends without a key or an event, so the backend must come back to look.
    var needsLooking: Bool {
        switch lasts {
        case .playing, .demo: true
        case .untilKey, .sending: false
        }
    }
}

/// A program the view started (a voice message's player), watched until it exits.
/// Compared by identity: two playbacks are never the same one.
public final class Playback: Equatable, @unchecked Sendable {   // `process` is only read, and Process is thread-safe for isRunning
    private let process: Process

    init(_ process: Process) { self.process = process }

    public var hasEnded: Bool { !process.isRunning }

    /// Ends the program (tests: only the one they started).
    func stop() { if process.isRunning { process.terminate() } }

    public static func == (a: Playback, b: Playback) -> Bool { a === b }
}

/// Work a demo command started in the background (Sam reinstalling): the command's notice
/// stays until the work calls `finish()`. Compared by identity.
public final class DemoTask: Equatable, Sendable {
    private let done = Atomic<Bool>(false)

    public init() {}

    /// Called by the work when it is over (on any thread).
    public func finish() { done.store(true, ordering: .releasing) }

    public var isFinished: Bool { done.load(ordering: .acquiring) }

    public static func == (a: DemoTask, b: DemoTask) -> Bool { a === b }
}
