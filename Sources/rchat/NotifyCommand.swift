import Foundation
import RChatCommandLine
import RChatCore
import RChatEngine
#if canImport(Glibc)
import Glibc
#endif

/// `rchat notify`: one desktop alert with a default action, shown and waited for in the
/// background (the check, `sync` and the linger start it and go on). Clicking the alert opens
/// its conversation: in the view running on this home (asked through the store and the local
/// wake-up), else in a new terminal (`$TERMINAL`, else `x-terminal-emulator`, running
/// `rchat --open NAME`).
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
        name: "notify", usage: "rchat notify --notify-send PATH [--conversation ID] -- TITLE TEXT",
        summary: "(started by the check, sync and the linger) show one alert; clicking it opens its conversation.",
        details: """
        Runs notify-send with a default action and waits for it (at most an hour). When the
        alert is clicked, a view running on this home switches to the conversation; without
        one, a terminal opens with `rchat --open NAME`.
        """,
        options: [.text("--notify-send", "PATH", help: "the notify-send to run"), conversationOption.option]
    ) { args, locations in
        try args.expectPositionals(max: 2)
        guard let notifySend = args.value("--notify-send") else { throw Arguments.UsageError(description: "give --notify-send PATH") }
        let title = try args.positional(0, "TITLE"), text = try args.positional(1, "TEXT")
        let conversation = args[Self.conversationOption].map(ConversationID.init)
        let shown = { (id: Int64) in
            // Kept, so the alert is closed when its message disappears; an account that cannot
            // be opened now only means it is not closed.
            guard let conversation, let account = try? AccountService(locations: locations) else { return }
            try? AlertCenter(account: account).recordNotification(id, conversation: conversation)
        }
        guard try clicked(notifySend, AlertSink.notifySendArguments(title: title, text: text, clickable: true), shown: shown) else { return }
        try open(conversation, locations)
    }

    /// Runs notify-send and reads what it prints: the notification's id first (`shown`),
    /// then the action's name once the alert is clicked.
    static func clicked(_ notifySend: String, _ arguments: [String], shown: (Int64) -> Void = { _ in }) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: notifySend)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let timer = DispatchSource.makeTimerSource()
        timer.schedule(deadline: .now() + longestWait)
        timer.setEventHandler { if process.isRunning { kill(process.processIdentifier, SIGTERM) } }
        timer.resume()
        var printed = Data()
        var idSeen = false
        while true {
            let part = output.fileHandleForReading.availableData
            if part.isEmpty { break }
            printed.append(part)
            if !idSeen, let newline = printed.firstIndex(of: 10) {
                idSeen = true
                if let id = Int64(String(decoding: printed[..<newline], as: UTF8.self).trimmingCharacters(in: .whitespaces)) { shown(id) }
            }
        }
        process.waitUntilExit()
        timer.cancel()
        return String(decoding: printed, as: UTF8.self).split(separator: "\n").contains("default")
    }

    /// Opens the conversation in the running view, or in a new terminal.
    static func open(_ conversation: ConversationID?, _ locations: Locations) throws {
        let account = try AccountService(locations: locations)
        let center = AlertCenter(account: account)
        if let conversation, try EngineLock(home: locations.home) == nil {
            // Something runs on this home: if it is the view, it takes the request at once.
            try center.requestOpen(conversation)
            WakeSignal.poke(home: locations.home)
            try Polling.until(within: viewAnswers) { () throws(EngineError) in try !center.openRequestWaiting }
            guard try center.takeOpenRequest() != nil else { return }   // taken: the view opened it
        }
        var view = [Detached.ownPath, "--home", locations.home, "--device-dir", locations.deviceDirectory]
        if let conversation, let contact = try? account.contact(conversation) { view += ["--open", contact.name] }
        let environment = ProcessInfo.processInfo.environment
        let terminal = environment["TERMINAL"].flatMap { $0.isEmpty ? nil : $0 } ?? "x-terminal-emulator"
        guard let path = Detached.executable(terminal, path: environment["PATH"]), Detached.start([path, "-e"] + view) else {
            throw EngineError.io("no terminal to open the conversation in: set TERMINAL, or install x-terminal-emulator")
        }
    }
}
