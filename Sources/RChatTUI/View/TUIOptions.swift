import Foundation
import RChatCore

/// A command only the demo has (e.g. "Sam goes offline"), typed as `/NAME ARGS` and listed
/// in the help overlay. The action returns a line for the status bar, or nil; one that
/// starts work in the background returns the work's task too, and its line stays until
/// the task is finished (or a key).
public struct DemoCommand {
    public var name: String
    public var help: String
    public var reply: ([String]) -> DemoReply?

    public init(name: String, help: String, action: @escaping ([String]) -> String?) {
        self.init(name: name, help: help, running: { action($0).map { DemoReply(text: $0) } })
    }

    public init(name: String, help: String, running: @escaping ([String]) -> DemoReply?) {
        self.name = name; self.help = help; self.reply = running
    }
}

/// A demo command's line for the status bar, and the work it speaks of while that runs.
public struct DemoReply {
    public var text: String
    public var task: DemoTask?

    public init(text: String, task: DemoTask? = nil) { self.text = text; self.task = task }
}

public struct TUIOptions {
    public var demoCommands: [DemoCommand]
    /// Where timestamps are read (tests pin it).
    public var timeZone: TimeZone
    /// How long a banner stays, in seconds, unless a key dismisses it first.
    public var bannerSeconds: Int64
    /// Open this conversation at start (the demo opens Sam).
    public var openAtStart: String?
    /// Where Ctrl-X Ctrl-E writes the draft for the editor: the account's home (nil: no
    /// editor).
    public var draftDirectory: String?
    /// The environment the view reads: `HOME` for `~`, `PATH` for xdg-open and the audio
    /// tools, the terminal's type and `NO_COLOR`/`RCHAT_GRAPHICS` for previews.
    public var environment: [String: String]
    /// Asks the terminal multiplexer the view runs in whether its window is shown
    /// (`MultiplexerProbe.ask` over `environment`; tests answer themselves).
    public var multiplexer: () -> AlertPolicy.Multiplexer

    public init(demoCommands: [DemoCommand] = [], timeZone: TimeZone = .current,
                bannerSeconds: Int64 = 5, openAtStart: String? = nil, draftDirectory: String? = nil,
                environment: [String: String] = ProcessInfo.processInfo.environment,
                multiplexer: (() -> AlertPolicy.Multiplexer)? = nil) {
        self.demoCommands = demoCommands; self.timeZone = timeZone
        self.bannerSeconds = bannerSeconds; self.openAtStart = openAtStart
        self.draftDirectory = draftDirectory
        self.environment = environment
        self.multiplexer = multiplexer ?? { MultiplexerProbe.ask(environment: environment) }
    }
}
