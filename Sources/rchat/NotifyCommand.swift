import Foundation
import RChatCommandLine
import RChatCore
import RChatEngine
#if canImport(Glibc)
import Glibc
#endif

/// `rchat notify`: one desktop alert with a default action, shown and waited for in the
/// background (the check, `sync` and the linger start it and go on). Its title and text come
/// on standard input, never in its command line (which any local user reads), and it is
/// shown over the session bus (`DesktopBus`). Clicking the alert opens its conversation: in
/// the view running on this home (asked through the store and the local wake-up), else in a
/// new terminal (`$TERMINAL`, else `x-terminal-emulator`, running the view, which takes the
/// same request at its start).
enum NotifyCommand {
    /// How long an alert is waited for before the wait is given up.
    static let longestWait = 3_600.0
    /// How long a running view has to take an open request before a terminal is opened instead.
    static let viewAnswers = 2.0

    static let conversationOption = Declared<Int64?>("--conversation", "ID", default: nil,
                                                     help: "the conversation clicking the alert opens",
                                                     expected: "a conversation id (a whole number)") { text -> Int64?? in
        Int64(text).map { .some($0) }
    }

    /// The command line that shows an alert for this account (`AlertSink.desktop`'s `onClick`).
    static func onClick(_ locations: Locations) -> [String] {
        [Detached.ownPath, "notify", "--home", locations.home, "--device-dir", locations.deviceDirectory]
    }

    static let command = Command(
        name: "notify", usage: "rchat notify [--conversation ID] < TITLE-AND-TEXT",
        summary: "(started by the check, sync and the linger) show one alert; clicking it opens its conversation.",
        details: """
        Reads the alert's title and text, one line each, on standard input, shows it on the
        desktop (over the session bus) with a default action and waits for it (at most an
        hour). When the alert is clicked, a view running on this home switches to the
        conversation; without one, a terminal opens with the view on it.
        """,
        options: [conversationOption.option]
    ) { args, locations in
        try args.expectPositionals(max: 0)
        let (title, text) = try readAlert()
        let conversation = args[Self.conversationOption].map(ConversationID.init)
        let shown = { (id: UInt32) in
            // Kept, so the alert is closed when its message disappears; an account that cannot
            // be opened now only means it is not closed.
            guard let conversation, let account = try? AccountService(locations: locations) else { return }
            try? AlertCenter(account: account).recordNotification(Int64(id), conversation: conversation)
        }
        let bus = try DesktopBus(address: DesktopBus.address())
        let ending = try bus.notifyAndWait(title: title, body: AlertPolicy.desktopBody(text), actions: ["default", "Open"],
                                           within: longestWait, shown: shown)
        guard ending == .action("default") else { return }
        try open(conversation, locations)
    }

    /// The title and the text from standard input (`AlertSink.notifyInput`): two lines, at
    /// most `Detached.inputLimit` bytes.
    static func readAlert() throws -> (title: String, text: String) {
        var input = Data()
        while input.count <= Detached.inputLimit, let part = try FileHandle.standardInput.read(upToCount: 4096), !part.isEmpty {
            input.append(part)
        }
        let lines = String(decoding: input, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard input.count <= Detached.inputLimit, lines.count == 3, lines[2].isEmpty, !lines[0].isEmpty else {
            throw Arguments.UsageError(description: "give the alert's title and text on standard input, one line each")
        }
        return (String(lines[0]), String(lines[1]))
    }

    /// Opens the conversation in the running view, or in a new terminal. Asked through the
    /// store either way: a view started for it takes the request at its start, so no command
    /// line (the terminal's lives as long as the view) names the contact.
    static func open(_ conversation: ConversationID?, _ locations: Locations) throws {
        let account = try AccountService(locations: locations)
        let center = AlertCenter(account: account)
        if let conversation {
            try center.requestOpen(conversation)
            if try EngineLock(home: locations.home) == nil {
                // Something runs on this home: if it is the view, it takes the request at once.
                WakeSignal.poke(home: locations.home)
                try Polling.until(within: viewAnswers) { () throws(EngineError) in try !center.openRequestWaiting }
                guard try center.takeOpenRequest() != nil else { return }   // taken: the view opened it
                try center.requestOpen(conversation)                        // for the view opened now
            }
        }
        let view = [Detached.ownPath, "--home", locations.home, "--device-dir", locations.deviceDirectory]
        let environment = ProcessInfo.processInfo.environment
        let terminal = environment["TERMINAL"].flatMap { $0.isEmpty ? nil : $0 } ?? "x-terminal-emulator"
        guard let path = Detached.executable(terminal, path: environment["PATH"]), Detached.start([path, "-e"] + view) else {
            _ = try? center.takeOpenRequest()   // nobody will: no later start opens it unasked
            throw EngineError.io("no terminal to open the conversation in: set TERMINAL, or install x-terminal-emulator")
        }
    }
}
